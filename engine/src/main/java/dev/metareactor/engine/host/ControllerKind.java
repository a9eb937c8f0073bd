package dev.metareactor.engine.host;

import dev.metareactor.engine.kube.KubeObject;
import java.util.Objects;

/**
 * A kind of controller object the engine hosts ({@code CompositeController}, ...): where its objects are served
 * and how a {@link HostedController} is built from one.
 *
 * @param kind the controller object's kind, as in Events and hook metrics ({@code CompositeController})
 * @param apiVersion the controller objects' apiVersion ({@code metacontroller.k8s.io/v1alpha1})
 * @param resource their plural resource name ({@code compositecontrollers})
 * @param hostName the name of the controller that hosts them, as upstream names its static controller
 *     ({@code composite-metacontroller}); it tags the host's own work-queue metrics
 * @param factory builds a controller from one controller object
 */
public record ControllerKind(String kind, String apiVersion, String resource, String hostName, Factory factory) {

  /** Builds controllers of one kind. */
  @FunctionalInterface
  public interface Factory {
    /**
     * Builds (but does not start) the controller an object declares. Runs on a worker thread, never on an
     * informer or event-loop thread; it may read Secrets or build TLS contexts.
     *
     * @throws RuntimeException with a message naming the field when the object cannot be hosted as written
     *     (reported as a {@code CreateError} Event on it)
     */
    HostedController create(KubeObject controllerObject, ControllerContext context);
  }

  public ControllerKind {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(apiVersion, "apiVersion");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(hostName, "hostName");
    Objects.requireNonNull(factory, "factory");
  }
}
