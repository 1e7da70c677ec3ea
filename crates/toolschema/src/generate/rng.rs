//! The generator's source of randomness: SplitMix64, seeded by the caller.
//!
//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
//! 2014; the generator Java's `SplittableRandom` uses and xoshiro's authors recommend for seeding)
//! is chosen because a seed must mean the same cases on every machine and with every build: the
//! whole algorithm is a 64-bit counter and a fixed mix of wrapping multiplications and shifts,
//! written here, so its stream depends on nothing but the seed (no platform word size, no
//! endianness, no library whose algorithm may change between versions, as `rand::rngs::StdRng`
//! says of itself). Its statistical quality (it passes BigCrush) is far more than test-case
//! generation needs, and it is not meant to be unpredictable.
//!
//! `rand_regex` draws through `rand`'s traits, so the generator implements them; what `rand`
//! does with the numbers (uniform ranges) is pinned by the lock file.

use std::convert::Infallible;

/// A SplitMix64 generator.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0), without modulo bias (Lemire's method with rejection).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next()) * u128::from(n);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// An index into a slice of length `len` (0 when it is empty).
    pub(crate) fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// An integer in `low..=high` (`low` when the range is empty).
    pub(crate) fn between(&mut self, low: i64, high: i64) -> i64 {
        if high <= low {
            return low;
        }
        let span = (i128::from(high) - i128::from(low) + 1) as u128;
        let offset = if span > u128::from(u64::MAX) {
            u128::from(self.next())
        } else {
            u128::from(self.below(span as u64))
        };
        (i128::from(low) + offset as i128) as i64
    }

    /// True with probability `numerator / denominator`.
    pub(crate) fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// A float in `[0, 1)` with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Shuffle in place (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// A generator for a sub-task, so that adding draws to one task does not change another's.
    pub(crate) fn fork(&mut self) -> SplitMix64 {
        SplitMix64::new(self.next())
    }
}

/// FNV-1a, 64-bit: a hash of a name that is the same everywhere (std's hashers promise no such
/// thing across releases), used to give each tool its own stream under one seed.
pub(crate) fn stable_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    hash
}

impl rand::TryRng for SplitMix64 {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.next() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let bytes = self.next().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_published_one() {
        // The first outputs of SplitMix64 seeded with 1234567, as in the reference implementation
        // (Vigna's splitmix64.c): a changed stream would change every seed's cases.
        let mut rng = SplitMix64::new(1_234_567);
        let first: Vec<u64> = (0..3).map(|_| rng.next()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn ranges_stay_in_bounds() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..10_000 {
            assert!(rng.below(3) < 3);
            let v = rng.between(-5, 5);
            assert!((-5..=5).contains(&v));
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(rng.between(4, 4), 4);
        assert_eq!(rng.between(9, 2), 9);
        assert_eq!(rng.below(0), 0);
        let wide = rng.between(i64::MIN, i64::MAX);
        let _ = wide;
    }

    #[test]
    fn names_hash_the_same_everywhere() {
        assert_eq!(stable_hash(""), 0xCBF2_9CE4_8422_2325);
        assert_eq!(stable_hash("a"), 0xAF63_DC4C_8601_EC8C);
    }
}
