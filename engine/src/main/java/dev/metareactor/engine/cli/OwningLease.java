package dev.metareactor.engine.cli;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.api.MapControllerSpec;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.history.ParentRef;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.shard.ShardKeys;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Which Lease names the engine that syncs a parent, as the API server tells it. With {@code --sharding} a parent
 * carries its controller's owner label ({@link ShardKeys#ownerLabel}) valued with the shard that owns it, and that
 * shard's Lease ({@link ShardKeys#leaseName}) is held by the replica that syncs it. A parent without the label is
 * synced by the holder of the leader Lease: an engine without {@code --sharding} labels nothing, and a sharded
 * parent not assigned yet (or already deleted, its label gone with it) has no better answer.
 *
 * <p>The parent's resource is the controller object's: a CompositeController's or a MapController's
 * {@code spec.parentResource}, a DecoratorController's first {@code spec.resources} entry that has an object of the
 * parent's name. Two reads (the controller object, the parent), both plain {@code get}s a kubectl user has.
 *
 * @param installation the engine's {@code --leader-election-id}: the leader Lease's name and the shard Leases' prefix
 */
record OwningLease(String installation) {

  private static final String CONTROLLERS = "/apis/metacontroller.k8s.io/v1alpha1/";

  OwningLease {
    Objects.requireNonNull(installation, "installation");
  }

  /** The name of the Lease whose holder syncs {@code parent}. */
  Mono<String> of(KubeApi api, ParentRef parent) {
    return api.get(CONTROLLERS + parent.kind() + "s/" + parent.controller(), "application/json")
        .map(bytes -> KubeJson.mapper().readTree(bytes))
        .flatMap(controller -> {
          String kind = controller.path("kind").asString("");
          List<ResourceRule> resources = resourcesOf(kind, controller);
          String label = ShardKeys.ownerLabel(kind, parent.controller());
          return Flux.fromIterable(resources)
              .concatMap(resource -> api.get(path(resource, parent), "application/json")
                  .map(bytes -> KubeJson.mapper().readTree(bytes))
                  .onErrorResume(error -> ApiException.codeOf(error) == 404, error -> Mono.empty()))
              .next()
              .map(found -> leaseOf(found.path("metadata").path("labels").path(label).asString("")))
              .defaultIfEmpty(installation);
        });
  }

  /** The Lease of the shard named by an owner label's value, or the leader's when there is none. */
  String leaseOf(String shard) {
    return shard.isBlank() ? installation : ShardKeys.leaseName(installation, shard);
  }

  /** The resources a controller object syncs parents (targets) of, in the order it declares them. */
  static List<ResourceRule> resourcesOf(String kind, JsonNode controller) {
    return switch (kind) {
      case CompositeControllerSpec.KIND -> List.of(CompositeControllerSpec.parse(controller).parent());
      case MapControllerSpec.KIND -> List.of(MapControllerSpec.parse(controller).parent());
      case DecoratorControllerSpec.KIND -> DecoratorControllerSpec.parse(controller).targets().stream()
          .map(DecoratorControllerSpec.Target::resource).toList();
      default -> throw new IllegalArgumentException("not a controller object: kind " + kind);
    };
  }

  /** The API server's path to {@code parent} as an object of {@code resource}. */
  static String path(ResourceRule resource, ParentRef parent) {
    String version = resource.group().isEmpty() ? "/api/" + resource.apiVersion() : "/apis/" + resource.apiVersion();
    String scope = parent.namespace().isEmpty() ? "" : "/namespaces/" + parent.namespace();
    return version + scope + "/" + resource.resource() + "/" + parent.name();
  }
}
