package dev.metareactor.engine.selector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A bucket files each key once, keeps what it was given past its array's size, and lets go of the last one. */
class IndexBucketTest {

  @Test
  void aKeyFiledAgainReplacesItsObject() {
    IndexBucket<String, String> bucket = IndexBucket.of("a", "a1").with("b", "b1").with("a", "a2");

    assertThat(bucket.values()).containsExactlyInAnyOrder("a2", "b1");
    assertThat(bucket.size()).isEqualTo(2);
  }

  @Test
  void theSameObjectFiledAgainChangesNothing() {
    IndexBucket<String, String> bucket = IndexBucket.of("a", "a1");

    assertThat(bucket.with("a", "a1")).isSameAs(bucket);
  }

  @Test
  void aBucketIsNeverChangedUnderAReader() {
    IndexBucket<String, String> few = IndexBucket.of("a", "a1").with("b", "b1");
    List<String> read = few.values();

    IndexBucket<String, String> changed = few.with("c", "c1").without("a");

    assertThat(few.values()).containsExactlyInAnyOrder("a1", "b1");
    assertThat(read).containsExactlyInAnyOrder("a1", "b1");
    assertThat(changed.values()).containsExactlyInAnyOrder("b1", "c1");
  }

  @Test
  void moreThanFewObjectsAreAllKeptAndTakenOutAgain() {
    int many = IndexBucket.FEW * 3;
    IndexBucket<String, String> bucket = IndexBucket.of("k0", "v0");
    for (int i = 1; i < many; i++) {
      bucket = bucket.with("k" + i, "v" + i);
    }
    assertThat(bucket.size()).isEqualTo(many);
    assertThat(bucket.values()).containsExactlyInAnyOrderElementsOf(
        IntStream.range(0, many).mapToObj(i -> "v" + i).toList());

    for (int i = 0; i < many - 1; i++) {
      bucket = bucket.without("k" + i);
      assertThat(bucket).isNotNull();
    }
    assertThat(bucket.values()).containsExactly("v" + (many - 1));
    assertThat(bucket.without("k" + (many - 1))).isNull();
  }

  @Test
  void takingOutWhatIsNotThereKeepsTheBucketAndTheLastOneEmptiesIt() {
    IndexBucket<String, String> bucket = IndexBucket.of("a", "a1").with("b", "b1");

    assertThat(bucket.without("x")).isSameAs(bucket);
    IndexBucket<String, String> one = bucket.without("b");
    assertThat(one.values()).containsExactly("a1");
    assertThat(one.without("a")).isNull();
  }
}
