package dev.metareactor.engine.cel;

import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.runtime.CelFunctionBinding;
import dev.metareactor.engine.kube.KubeJson;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The engine's own CEL functions, beside the standard ones and cel-java's extensions (see the package description
 * for the whole list):
 *
 * <ul>
 *   <li>{@code "<pattern>".format([args])}: {@code %s} is an argument as text (a string as it is, anything else as
 *       compact JSON), {@code %d} a whole number, {@code %%} a percent sign;
 *   <li>{@code sha256(value)}: the lowercase hex SHA-256 of the value's canonical JSON (object keys sorted), to name
 *       or annotate what an object was made from;
 *   <li>{@code toJson(value)}: the value as compact JSON text (a ConfigMap's data from a structure);
 *   <li>{@code merge(base, overlay)}: {@code base} with {@code overlay}'s entries over it, maps merged key by key
 *       at every depth, anything else taken from {@code overlay}.
 * </ul>
 */
final class CelHelpers {

  private static final MapType MAP = MapType.create(SimpleType.DYN, SimpleType.DYN);

  private CelHelpers() {}

  static List<CelFunctionDecl> declarations() {
    return List.of(
        CelFunctionDecl.newFunctionDeclaration("format", CelOverloadDecl.newMemberOverload("string_format_list",
            SimpleType.STRING, SimpleType.STRING, ListType.create(SimpleType.DYN))),
        CelFunctionDecl.newFunctionDeclaration("sha256",
            CelOverloadDecl.newGlobalOverload("sha256_dyn", SimpleType.STRING, SimpleType.DYN)),
        CelFunctionDecl.newFunctionDeclaration("toJson",
            CelOverloadDecl.newGlobalOverload("to_json_dyn", SimpleType.STRING, SimpleType.DYN)),
        CelFunctionDecl.newFunctionDeclaration("merge",
            CelOverloadDecl.newGlobalOverload("merge_map_map", MAP, MAP, MAP)));
  }

  static List<CelFunctionBinding> bindings() {
    return List.of(
        CelFunctionBinding.from("string_format_list", String.class, List.class, CelHelpers::format),
        CelFunctionBinding.from("sha256_dyn", Object.class, CelHelpers::sha256),
        CelFunctionBinding.from("to_json_dyn", Object.class, value -> KubeJson.text(CelValues.toJson(value, false))),
        CelFunctionBinding.from("merge_map_map", Map.class, Map.class, CelHelpers::merge));
  }

  static String format(String pattern, List<?> args) {
    StringBuilder text = new StringBuilder(pattern.length());
    int next = 0;
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      if (c != '%') {
        text.append(c);
        continue;
      }
      if (i + 1 == pattern.length()) {
        throw new CelHookException("format: the pattern ends with a lone %");
      }
      char verb = pattern.charAt(++i);
      if (verb == '%') {
        text.append('%');
        continue;
      }
      if (next == args.size()) {
        throw new CelHookException("format: more verbs than the " + args.size() + " arguments");
      }
      Object arg = args.get(next++);
      switch (verb) {
        case 's' -> text.append(arg instanceof String string ? string : KubeJson.text(CelValues.toJson(arg, false)));
        case 'd' -> {
          if (!(arg instanceof Long) && !(arg instanceof com.google.common.primitives.UnsignedLong)) {
            throw new CelHookException("format: %d needs a whole number, argument " + next + " is "
                + KubeJson.text(CelValues.toJson(arg, false)));
          }
          text.append(arg);
        }
        default -> throw new CelHookException("format: unknown verb %" + verb + " (%s, %d and %% are known)");
      }
    }
    if (next != args.size()) {
      throw new CelHookException("format: " + args.size() + " arguments for " + next + " verbs");
    }
    return text.toString();
  }

  static String sha256(Object value) {
    byte[] canonical = KubeJson.text(CelValues.toJson(value, true)).getBytes(StandardCharsets.UTF_8);
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java has SHA-256", e);
    }
  }

  static Map<Object, Object> merge(Map<?, ?> base, Map<?, ?> overlay) {
    Map<Object, Object> merged = new LinkedHashMap<>(base);
    overlay.forEach((key, value) -> {
      Object under = merged.get(key);
      merged.put(key, under instanceof Map<?, ?> baseMap && value instanceof Map<?, ?> overlayMap
          ? merge(baseMap, overlayMap) : value);
    });
    return merged;
  }
}
