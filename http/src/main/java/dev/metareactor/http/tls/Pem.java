package dev.metareactor.http.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads certificates and private keys from PEM text as Kubernetes Secrets hold them ({@code ca.crt}, {@code tls.crt},
 * {@code tls.key}).
 *
 * <p>Keys may be PKCS#8 ({@code PRIVATE KEY}), PKCS#1 RSA ({@code RSA PRIVATE KEY}, what cert-manager and
 * {@code openssl genrsa -traditional} write) or SEC1 EC ({@code EC PRIVATE KEY}) — the three forms Go's
 * {@code tls.X509KeyPair} accepts, so a Secret that works with Metacontroller works here. The JDK reads only PKCS#8,
 * so the other two are wrapped into PKCS#8 first. Encrypted keys are refused.
 */
public final class Pem {

  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);

  // DER of the AlgorithmIdentifier OIDs PKCS#8 needs around a PKCS#1 or SEC1 key.
  private static final byte[] RSA_ALGORITHM = {
      0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
  private static final byte[] EC_PUBLIC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};
  private static final byte[] VERSION_ZERO = {0x02, 0x01, 0x00};

  private Pem() {}

  /**
   * Every {@code CERTIFICATE} block in the text, in order.
   *
   * @throws IllegalArgumentException when there is none or one cannot be read
   */
  public static List<X509Certificate> certificates(String pem, String what) {
    Objects.requireNonNull(pem, "pem");
    List<X509Certificate> certificates = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      for (Block block : blocks(pem)) {
        if (block.type().equals("CERTIFICATE")) {
          certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(block.der())));
        }
      }
    } catch (CertificateException e) {
      throw new IllegalArgumentException(what + ": unreadable certificate: " + e.getMessage(), e);
    }
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException(what + ": no PEM certificate found");
    }
    return List.copyOf(certificates);
  }

  /**
   * The first private key block in the text.
   *
   * @throws IllegalArgumentException when there is none, it is encrypted, or it cannot be read
   */
  public static PrivateKey privateKey(String pem, String what) {
    Objects.requireNonNull(pem, "pem");
    for (Block block : blocks(pem)) {
      byte[] pkcs8 = switch (block.type()) {
        case "PRIVATE KEY" -> block.der();
        case "RSA PRIVATE KEY" -> pkcs8(RSA_ALGORITHM, block.der());
        case "EC PRIVATE KEY" -> pkcs8(der(0x30, concat(EC_PUBLIC_KEY_OID, sec1CurveOid(block.der(), what))),
            block.der());
        case "ENCRYPTED PRIVATE KEY" -> throw new IllegalArgumentException(what + ": encrypted keys are not supported");
        default -> null;
      };
      if (pkcs8 != null) {
        return keyFromPkcs8(pkcs8, what);
      }
    }
    throw new IllegalArgumentException(what + ": no PEM private key found");
  }

  private static PrivateKey keyFromPkcs8(byte[] pkcs8, String what) {
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(pkcs8);
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm: the PKCS#8 header names it, but the JDK only tells by trying
      }
    }
    throw new IllegalArgumentException(what + ": unreadable private key (expected RSA, EC or Ed25519)");
  }

  private record Block(String type, byte[] der) {}

  private static List<Block> blocks(String pem) {
    List<Block> blocks = new ArrayList<>();
    Matcher matcher = BLOCK.matcher(pem);
    while (matcher.find()) {
      String body = matcher.group(2);
      if (body.contains(":")) {
        // RFC 1421 headers (Proc-Type: 4,ENCRYPTED ...) mark a legacy encrypted key.
        throw new IllegalArgumentException("encrypted PEM blocks are not supported");
      }
      byte[] der = Base64.getMimeDecoder().decode(body.getBytes(StandardCharsets.US_ASCII));
      blocks.add(new Block(matcher.group(1), der));
    }
    return blocks;
  }

  /** {@code PrivateKeyInfo ::= SEQUENCE { version 0, algorithm, privateKey OCTET STRING }}. */
  private static byte[] pkcs8(byte[] algorithm, byte[] key) {
    return der(0x30, concat(VERSION_ZERO, algorithm, der(0x04, key)));
  }

  /**
   * The curve OID (full TLV) of a SEC1 {@code ECPrivateKey ::= SEQUENCE { version, privateKey OCTET STRING,
   * [0] parameters OID OPTIONAL, [1] publicKey OPTIONAL }}.
   */
  private static byte[] sec1CurveOid(byte[] sec1, String what) {
    try {
      return findCurveOid(sec1);
    } catch (IndexOutOfBoundsException e) {
      throw new IllegalArgumentException(what + ": malformed EC private key", e);
    }
  }

  private static byte[] findCurveOid(byte[] sec1) {
    Der outer = new Der(sec1, 0);
    Der field = new Der(sec1, outer.contentStart());
    while (field.end() <= outer.end()) {
      if ((sec1[field.start()] & 0xff) == 0xa0) {
        Der oid = new Der(sec1, field.contentStart());
        byte[] tlv = new byte[oid.end() - oid.start()];
        System.arraycopy(sec1, oid.start(), tlv, 0, tlv.length);
        return tlv;
      }
      if (field.end() == outer.end()) {
        break;
      }
      field = new Der(sec1, field.end());
    }
    throw new IndexOutOfBoundsException("no curve parameters");
  }

  /** One DER tag-length-value starting at {@code start}. */
  private record Der(int start, int contentStart, int end) {
    Der(byte[] der, int start) {
      this(start, contentStart(der, start), contentStart(der, start) + length(der, start));
    }

    private static int contentStart(byte[] der, int start) {
      int first = der[start + 1] & 0xff;
      return start + 2 + (first < 0x80 ? 0 : first & 0x7f);
    }

    private static int length(byte[] der, int start) {
      int first = der[start + 1] & 0xff;
      if (first < 0x80) {
        return first;
      }
      int length = 0;
      for (int i = 0; i < (first & 0x7f); i++) {
        length = (length << 8) | (der[start + 2 + i] & 0xff);
      }
      return length;
    }
  }

  private static byte[] der(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
    out.write(tag);
    int length = content.length;
    if (length < 0x80) {
      out.write(length);
    } else {
      int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write(length >>> (8 * i));
      }
    }
    out.writeBytes(content);
    return out.toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }
}
