package dev.metareactor.engine.queue;

import java.util.Objects;

/**
 * One run handed out by {@link KeyedWorkQueue#keys()}: the key and why it runs.
 *
 * @param key the key to run; it is running until {@link KeyedWorkQueue#done} is called for it
 * @param causes the causes of the adds this run coalesced
 * @param <K> the key type
 */
public record Work<K>(K key, Causes causes) {

  public Work {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(causes, "causes");
  }
}
