package dev.metareactor.engine.shard;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The names sharding writes on objects and leases.
 *
 * <ul>
 *   <li>{@link #ownerLabel}: {@code shard.metareactor.dev/<tag>.<controller>} on a parent and on every object the
 *   engine writes for it, valued with the owning shard. {@code <tag>} is the controller object's kind ({@code cc},
 *   {@code dec}, {@code map}, as the CRDs' short names), so that a CompositeController and a DecoratorController of
 *   the same name have labels of their own. A name that would make the label name longer than Kubernetes' 63
 *   characters is cut and suffixed with a hash of the whole.</li>
 *   <li>{@link #INSTALLATION} and {@link #SHARD} on each shard's Lease, which is named {@link #leaseName}.</li>
 * </ul>
 */
public final class ShardKeys {

  /** The prefix of every owner label. */
  public static final String PREFIX = "shard.metareactor.dev/";
  /** On a shard's Lease: which installation (the leader-election id) it is a shard of. */
  public static final String INSTALLATION = "shard.metareactor.dev/installation";
  /** On a shard's Lease: the shard's name. */
  public static final String SHARD = "shard.metareactor.dev/shard";

  private static final int MAX_NAME = 63;
  private static final Pattern LABEL_VALUE = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

  private ShardKeys() {}

  /**
   * The owner label of a controller.
   *
   * @param kind the controller object's kind ({@code CompositeController}, ...)
   * @param name the controller object's name
   */
  public static String ownerLabel(String kind, String name) {
    String full = tag(kind) + "." + name;
    if (full.length() <= MAX_NAME) {
      return PREFIX + full;
    }
    String hash = sha1(full).substring(0, 10);
    String cut = full.substring(0, MAX_NAME - hash.length() - 1);
    while (!cut.isEmpty() && !Character.isLetterOrDigit(cut.charAt(cut.length() - 1))) {
      cut = cut.substring(0, cut.length() - 1);
    }
    return PREFIX + cut + "-" + hash;
  }

  private static String tag(String kind) {
    return switch (kind) {
      case "CompositeController" -> "cc";
      case "DecoratorController" -> "dec";
      case "MapController" -> "map";
      default -> kind.toLowerCase(Locale.ROOT);
    };
  }

  /** The Lease of {@code shard} in installation {@code installation}. */
  public static String leaseName(String installation, String shard) {
    return installation + "-shard-" + shard.toLowerCase(Locale.ROOT);
  }

  /**
   * Checks a shard name: it is a label value on every object the shard owns.
   *
   * @throws IllegalArgumentException naming the flag when it cannot be
   */
  public static String requireShardName(String shard) {
    Objects.requireNonNull(shard, "shard");
    if (shard.length() > MAX_NAME || !LABEL_VALUE.matcher(shard).matches()) {
      throw new IllegalArgumentException("--shard-name '" + shard + "' is not a valid label value (at most 63 "
          + "letters, digits, '-', '_' or '.', starting and ending with a letter or digit)");
    }
    return shard;
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is part of every JDK", e);
    }
  }
}
