package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalClusterTest {

  @Test
  void namespaceNamesAreValidDnsLabels() {
    String name = LocalCluster.namespaceName("MyVeryLongTestClassNameIT-someRatherLongTestMethodName_withStuff");
    assertThat(name).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?").hasSizeLessThanOrEqualTo(63)
        .startsWith("it-myverylongtestclassnameit-somerather");
    assertThat(LocalCluster.namespaceName("--")).matches("it-[a-z0-9]{5}");
    assertThat(LocalCluster.namespaceName("A")).isNotEqualTo(LocalCluster.namespaceName("A"));
  }

  @Test
  void repoRootIsFoundFromASubdirectory(@TempDir Path tmp) throws Exception {
    Files.createDirectories(tmp.resolve("hack"));
    Files.writeString(tmp.resolve("hack/local-cluster.sh"), "#!/bin/sh\n");
    Path deep = Files.createDirectories(tmp.resolve("a/b/c"));
    assertThat(ControlPlane.findRepoRoot(deep)).isEqualTo(tmp.toAbsolutePath());
  }

  @Test
  void missingScriptIsAClearError(@TempDir Path tmp) {
    assertThatThrownBy(() -> ControlPlane.findRepoRoot(tmp)).hasMessageContaining("hack/local-cluster.sh");
  }

  @Test
  void thisRepositoryHasTheScript() {
    Path root = ControlPlane.findRepoRoot(Path.of(System.getProperty("user.dir")));
    assertThat(root.resolve("hack/build-k8s.sh")).isRegularFile();
  }
}
