//! A small deterministic random generator for test inputs: xoshiro256**
//! seeded through SplitMix64.
//!
//! Every [`Rng::new`] draws a fresh seed (time, process id and a counter), so
//! each run tests new inputs, and prints it to stderr, which the test harness
//! shows only when the test fails:
//!
//! ```text
//! test rng seed: 0x1f2e3d4c5b6a7988 (reproduce with CUDAKIT_TEST_SEED=0x1f2e3d4c5b6a7988)
//! ```
//!
//! With `CUDAKIT_TEST_SEED` set (decimal or `0x` hex), every `Rng::new` in
//! the process uses that seed instead. A test should therefore draw all its
//! inputs from one `Rng` (or from [`Rng::fork`]s of it), so that the seed it
//! printed reproduces all of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use cudakit::{Bf16, F16};

/// The environment variable that fixes the seed of every [`Rng::new`].
pub const SEED_ENV: &str = "CUDAKIT_TEST_SEED";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// xoshiro256** (Blackman and Vigna), 256 bits of state, period 2^256 - 1.
/// Not cryptographic; fast, and good enough for test data.
#[derive(Clone, Debug)]
pub struct Rng {
    state: [u64; 4],
    seed: u64,
}

/// One SplitMix64 step: advances `x` and returns the next output.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Parses a seed written in decimal or as `0x` hex.
///
/// # Errors
///
/// A message naming the text when it is neither.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => t.replace('_', "").parse::<u64>(),
    };
    parsed.map_err(|e| format!("{SEED_ENV}={text:?} is not a u64 (decimal or 0x hex): {e}"))
}

/// A fresh seed: wall-clock nanoseconds, the process id and a per-process
/// counter, mixed so that nearby inputs give unrelated seeds.
fn fresh_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut x = nanos ^ (u64::from(std::process::id()) << 32) ^ count.rotate_left(17);
    splitmix64(&mut x)
}

impl Rng {
    /// A generator with a fresh seed, or the one in `CUDAKIT_TEST_SEED`;
    /// prints the seed to stderr either way.
    ///
    /// # Panics
    ///
    /// When `CUDAKIT_TEST_SEED` is set but is not a number.
    pub fn new() -> Rng {
        let seed = match std::env::var(SEED_ENV) {
            Ok(text) => parse_seed(&text).unwrap_or_else(|e| panic!("{e}")),
            Err(_) => fresh_seed(),
        };
        let rng = Rng::from_seed(seed);
        eprintln!("test rng {}", rng.describe());
        rng
    }

    /// A generator with the given seed (prints nothing).
    pub fn from_seed(seed: u64) -> Rng {
        let mut x = seed;
        let state = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        // SplitMix64 is a bijection of its counter, so four consecutive
        // outputs are never all zero; the all-zero state is the one
        // xoshiro must avoid.
        debug_assert!(state.iter().any(|&s| s != 0));
        Rng { state, seed }
    }

    /// The seed this generator started from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// `"seed 0x... (reproduce with CUDAKIT_TEST_SEED=0x...)"`, for failure
    /// messages.
    pub fn describe(&self) -> String {
        format!(
            "seed {:#018x} (reproduce with {SEED_ENV}={:#018x})",
            self.seed, self.seed
        )
    }

    /// An independent generator derived from this one's stream (for a
    /// thread or a sub-case); reproducible from the parent's seed.
    pub fn fork(&mut self) -> Rng {
        Rng::from_seed(self.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// The next 32 random bits (the high half of [`next_u64`](Self::next_u64)).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..n`, without modulo bias (Lemire's method).
    ///
    /// # Panics
    ///
    /// When `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform in `lo..hi` (half-open).
    ///
    /// # Panics
    ///
    /// When the range is empty.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        assert!(lo < hi, "Rng::range({lo}, {hi}) is empty");
        lo + self.below((hi - lo) as u64) as usize
    }

    /// A uniformly random `i32` (every value equally likely).
    pub fn i32(&mut self) -> i32 {
        self.next_u32() as i32
    }

    /// Uniform in `lo..=hi`.
    ///
    /// # Panics
    ///
    /// When `lo > hi`.
    pub fn i32_in(&mut self, lo: i32, hi: i32) -> i32 {
        assert!(lo <= hi, "Rng::i32_in({lo}, {hi}) is empty");
        let span = (i64::from(hi) - i64::from(lo) + 1) as u64;
        (i64::from(lo) + self.below(span) as i64) as i32
    }

    /// Uniform in `[0, 1)` with 53 random bits: every multiple of 2^-53.
    pub fn f64_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[-1, 1)`: multiples of 2^-52.
    pub fn f64_sym(&mut self) -> f64 {
        2.0 * self.f64_unit() - 1.0
    }

    /// Uniform in `[-1, 1)` as f32: multiples of 2^-23, exactly
    /// representable (no rounding step biases the distribution).
    pub fn f32_sym(&mut self) -> f32 {
        let k = (self.next_u32() >> 8) as f32; // 0 .. 2^24, exact in f32
        k * (1.0 / (1u32 << 23) as f32) - 1.0
    }

    /// An f16 near-uniform in `[-1, 1)`: an f32 from [`f32_sym`](Self::f32_sym)
    /// rounded to nearest. References must use the rounded value
    /// ([`F16::to_f32`]), which is what the GPU multiplies.
    pub fn f16_sym(&mut self) -> F16 {
        F16::from_f32(self.f32_sym())
    }

    /// A bf16 near-uniform in `[-1, 1)` (rounded from an f32, as for
    /// [`f16_sym`](Self::f16_sym)).
    pub fn bf16_sym(&mut self) -> Bf16 {
        Bf16::from_f32(self.f32_sym())
    }

    /// `n` values from [`f32_sym`](Self::f32_sym).
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32_sym()).collect()
    }

    /// `n` values from [`f64_sym`](Self::f64_sym).
    pub fn vec_f64(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.f64_sym()).collect()
    }

    /// `n` values from [`f16_sym`](Self::f16_sym).
    pub fn vec_f16(&mut self, n: usize) -> Vec<F16> {
        (0..n).map(|_| self.f16_sym()).collect()
    }

    /// `n` values from [`bf16_sym`](Self::bf16_sym).
    pub fn vec_bf16(&mut self, n: usize) -> Vec<Bf16> {
        (0..n).map(|_| self.bf16_sym()).collect()
    }

    /// `n` uniformly random `i32`s.
    pub fn vec_i32(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.i32()).collect()
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

impl Default for Rng {
    /// [`Rng::new`].
    fn default() -> Rng {
        Rng::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_xoshiro256starstar() {
        // The reference C code (prng.di.unimi.it) from state {1, 2, 3, 4}; the
        // same vector rand_xoshiro tests against.
        let mut rng = Rng {
            state: [1, 2, 3, 4],
            seed: 0,
        };
        let got: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            [
                11520,
                0,
                1_509_978_240,
                1_215_971_899_390_074_240,
                1_216_172_134_540_287_360,
                607_988_272_756_665_600,
            ]
        );
    }

    #[test]
    fn splitmix_matches_the_reference() {
        // The reference SplitMix64 from seed 1234567 (rand_xoshiro's vector).
        let mut x = 1_234_567u64;
        let got: Vec<u64> = (0..3).map(|_| splitmix64(&mut x)).collect();
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_stream() {
        let mut a = Rng::from_seed(42);
        let mut b = Rng::from_seed(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut c = Rng::from_seed(43);
        assert_ne!(Rng::from_seed(42).next_u64(), c.next_u64());
        assert_eq!(a.seed(), 42);
        assert!(a
            .describe()
            .contains("CUDAKIT_TEST_SEED=0x000000000000002a"));
    }

    #[test]
    fn fresh_seeds_differ() {
        let seeds: Vec<u64> = (0..64).map(|_| fresh_seed()).collect();
        let mut sorted = seeds.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), seeds.len());
    }

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed("123"), Ok(123));
        assert_eq!(parse_seed(" 0x2a "), Ok(42));
        assert_eq!(parse_seed("0X_FF"), Ok(255));
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_seed("seven").unwrap_err().contains(SEED_ENV));
        assert!(parse_seed("").is_err());
    }

    #[test]
    fn floats_stay_in_range_and_cover_it() {
        let mut rng = Rng::from_seed(7);
        let (mut lo32, mut hi32) = (0f32, 0f32);
        let (mut lo64, mut hi64) = (0f64, 0f64);
        for _ in 0..100_000 {
            let x = rng.f32_sym();
            assert!((-1.0..1.0).contains(&x), "{x}");
            lo32 = lo32.min(x);
            hi32 = hi32.max(x);
            let y = rng.f64_sym();
            assert!((-1.0..1.0).contains(&y), "{y}");
            lo64 = lo64.min(y);
            hi64 = hi64.max(y);
            let u = rng.f64_unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert!(lo32 < -0.999 && hi32 > 0.999, "{lo32} {hi32}");
        assert!(lo64 < -0.999 && hi64 > 0.999, "{lo64} {hi64}");
    }

    #[test]
    fn half_floats_are_rounded_f32s_in_range() {
        let mut rng = Rng::from_seed(8);
        for _ in 0..10_000 {
            let h = rng.f16_sym();
            let x = h.to_f32();
            assert!((-1.0..=1.0).contains(&x), "{x}");
            assert_eq!(F16::from_f32(x), h, "round trip");
            let b = rng.bf16_sym();
            let y = b.to_f32();
            assert!((-1.0..=1.0).contains(&y), "{y}");
            assert_eq!(Bf16::from_f32(y), b, "round trip");
        }
    }

    #[test]
    fn below_is_unbiased_enough_and_in_range() {
        let mut rng = Rng::from_seed(9);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            let v = rng.below(6) as usize;
            counts[v] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        for _ in 0..1000 {
            let v = rng.range(10, 13);
            assert!((10..13).contains(&v));
            let w = rng.i32_in(-3, 3);
            assert!((-3..=3).contains(&w));
        }
        assert_eq!(rng.i32_in(i32::MIN, i32::MIN), i32::MIN);
        let _ = rng.i32_in(i32::MIN, i32::MAX);
        assert_eq!(rng.below(1), 0);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = Rng::from_seed(10);
        let mut v: Vec<u32> = (0..100).collect();
        rng.shuffle(&mut v);
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn forks_are_reproducible_and_distinct() {
        let mut a = Rng::from_seed(11);
        let mut b = Rng::from_seed(11);
        let mut fa = a.fork();
        let mut fb = b.fork();
        assert_eq!(fa.next_u64(), fb.next_u64());
        assert_ne!(a.next_u64(), fa.next_u64());
    }
}
