package dev.metareactor.engine.config;

import java.util.Objects;

/**
 * {@code --leader-election*}: whether to run only while holding a lease, and which one.
 *
 * @param enabled {@code --leader-election}
 * @param resourceLock {@code --leader-election-resource-lock}; only {@code leases} is supported
 * @param namespace {@code --leader-election-namespace}; empty means the pod's own namespace
 * @param id {@code --leader-election-id}, the lease name
 */
public record LeaderElectionSettings(boolean enabled, String resourceLock, String namespace, String id) {

  public LeaderElectionSettings {
    Objects.requireNonNull(resourceLock, "resourceLock");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(id, "id");
    if (!resourceLock.equals("leases")) {
      throw new IllegalArgumentException("unsupported --leader-election-resource-lock '" + resourceLock
          + "': only leases is supported");
    }
    if (enabled && id.isBlank()) {
      throw new IllegalArgumentException("--leader-election-id must not be empty");
    }
  }
}
