package dev.metareactor.testing.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Runs tests against the local control plane of {@code hack/local-cluster.sh}: one per test JVM, started on first use
 * and stopped at JVM exit (see {@link ControlPlane}). Each test gets its own {@link LocalCluster}: a fresh namespace
 * and a {@link KubernetesClient} defaulting to it, both cleaned up after the test.
 *
 * <p>They are injected as parameters of test and {@code @BeforeEach}/{@code @AfterEach} methods, and into non-static,
 * non-final fields of type {@link LocalCluster} or {@link KubernetesClient} of the test instance.
 *
 * <p>A parameter of a {@code @BeforeAll} or {@code @AfterAll} method gets the class's own {@link LocalCluster}
 * instead: one namespace for all its tests, cleaned up after the last (and after the class's {@code @AfterAll}
 * methods), for what its tests share because it is costly to set up again for each.
 *
 * <pre>{@code
 * @LocalKubernetes
 * class MyIT {
 *     @Test
 *     void works(KubernetesClient client, LocalCluster cluster) { ... }
 * }
 * }</pre>
 */
public final class KubernetesClusterExtension implements BeforeEachCallback, AfterEachCallback, AfterAllCallback,
    ParameterResolver {

  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(
      KubernetesClusterExtension.class);
  private static final String KEY = "localCluster";
  private static final String CLASS_KEY = "classLocalCluster";

  @Override
  public void beforeEach(ExtensionContext context) throws IllegalAccessException {
    LocalCluster cluster = new LocalCluster(ControlPlane.get(),
        context.getRequiredTestClass().getSimpleName() + "-" + context.getRequiredTestMethod().getName());
    context.getStore(STORE).put(KEY, cluster);
    for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
      for (Field f : fields(instance.getClass())) {
        if (f.getType() == LocalCluster.class) {
          f.setAccessible(true);
          f.set(instance, cluster);
        } else if (f.getType() == KubernetesClient.class) {
          f.setAccessible(true);
          f.set(instance, cluster.client());
        }
      }
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    LocalCluster cluster = context.getStore(STORE).remove(KEY, LocalCluster.class);
    if (cluster != null) {
      cluster.close();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    LocalCluster cluster = context.getStore(STORE).remove(CLASS_KEY, LocalCluster.class);
    if (cluster != null) {
      cluster.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return type == LocalCluster.class || type == KubernetesClient.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    LocalCluster cluster = extensionContext.getTestMethod().isPresent()
        ? extensionContext.getStore(STORE).get(KEY, LocalCluster.class) : classCluster(extensionContext);
    if (cluster == null) {
      throw new ParameterResolutionException("no LocalCluster for " + extensionContext.getDisplayName());
    }
    return parameterContext.getParameter().getType() == LocalCluster.class ? cluster : cluster.client();
  }

  /** The class's own cluster, made on first use (a parameter of its {@code @BeforeAll} method). */
  private static LocalCluster classCluster(ExtensionContext classContext) {
    return classContext.getStore(STORE).getOrComputeIfAbsent(CLASS_KEY,
        key -> new LocalCluster(ControlPlane.get(), classContext.getRequiredTestClass().getSimpleName()),
        LocalCluster.class);
  }

  private static List<Field> fields(Class<?> type) {
    List<Field> result = new ArrayList<>();
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        int m = f.getModifiers();
        if (!Modifier.isStatic(m) && !Modifier.isFinal(m) && !f.isSynthetic()) {
          result.add(f);
        }
      }
    }
    return result;
  }
}
