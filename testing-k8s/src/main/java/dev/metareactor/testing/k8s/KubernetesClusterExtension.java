package dev.metareactor.testing.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
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
 * <pre>{@code
 * @LocalKubernetes
 * class MyIT {
 *     @Test
 *     void works(KubernetesClient client, LocalCluster cluster) { ... }
 * }
 * }</pre>
 */
public final class KubernetesClusterExtension implements BeforeEachCallback, AfterEachCallback, ParameterResolver {

  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(
      KubernetesClusterExtension.class);
  private static final String KEY = "localCluster";

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
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return (type == LocalCluster.class || type == KubernetesClient.class)
        && extensionContext.getTestMethod().isPresent();
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    LocalCluster cluster = extensionContext.getStore(STORE).get(KEY, LocalCluster.class);
    if (cluster == null) {
      throw new ParameterResolutionException("no LocalCluster for " + extensionContext.getDisplayName());
    }
    return parameterContext.getParameter().getType() == LocalCluster.class ? cluster : cluster.client();
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
