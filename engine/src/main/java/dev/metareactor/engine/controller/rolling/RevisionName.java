package dev.metareactor.engine.controller.rolling;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The name of a parent's ControllerRevision, spelled as Metacontroller spells it so that a cluster can switch
 * engines in the middle of a rollout: {@code <plural>.<group, or "core">-<sha1>}, the hash taken over the parent's
 * UID followed by the revision's {@code parentPatch} as Go writes it ({@link RevisionPatch#goJson()}). The prefix is
 * cut to 212 characters so that the name, with the separator and the 40 hex digits, fits the 253 of a DNS subdomain.
 *
 * <p>The hash only makes creation idempotent (the same parent and patch always name the same revision); revisions
 * are found by label selector and ControllerRef, never by name, so an adopted revision keeps its name although its
 * new parent's UID would hash differently.
 */
public final class RevisionName {

  /** 253 characters of a name, less 40 hex digits of SHA-1 and a separator. */
  static final int MAX_PREFIX = 253 - 41;

  private RevisionName() {}

  /**
   * The revision name for a parent of {@code plural} in {@code group} ({@code ""} for the core group) with
   * {@code parentUid} and the patch bytes {@code parentPatch}.
   */
  public static String of(String plural, String group, String parentUid, byte[] parentPatch) {
    String prefix = plural + "." + (group.isEmpty() ? "core" : group);
    if (prefix.length() > MAX_PREFIX) {
      prefix = prefix.substring(0, MAX_PREFIX);
    }
    return prefix + "-" + sha1(parentUid.getBytes(StandardCharsets.UTF_8), parentPatch);
  }

  private static String sha1(byte[] first, byte[] second) {
    try {
      // Not for security: a low-collision name, the digest Metacontroller's names are made with.
      MessageDigest digest = MessageDigest.getInstance("SHA-1");
      digest.update(first);
      digest.update(second);
      return HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-1", e);
    }
  }
}
