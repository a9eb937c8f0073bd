package dev.metareactor.testing.k8s;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated test class against the local control plane ({@link KubernetesClusterExtension}); tagged
 * {@code k8s}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("k8s")
@ExtendWith(KubernetesClusterExtension.class)
public @interface LocalKubernetes {
}
