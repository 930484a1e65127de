//! A small deterministic pseudo-random generator for the simulator: xoshiro256** (Blackman &
//! Vigna, "Scrambled linear pseudorandom number generators", 2021) seeded through SplitMix64,
//! as the authors recommend. The same seed gives the same stream on every platform (only
//! integer arithmetic and IEEE-754 operations), so a simulation is reproducible from its seed.
//!
//! Draws: uniform on [0, 1), exponential, standard normal (Box–Muller), gamma (Marsaglia &
//! Tsang, "A simple method for generating gamma variables", ACM TOMS 2000, with the
//! `U^(1/k)` boost for shapes below 1), and whole numbers in a range.

/// SplitMix64 step (Steele, Lea & Flood 2014): used to expand a seed into the state.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on (0, 1] (safe to take the logarithm of).
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Exponential with mean 1.
    pub fn exp1(&mut self) -> f64 {
        -self.uniform_open0().ln()
    }

    /// Standard normal (Box–Muller; one of the pair is used).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform_open0();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Gamma with shape `k > 0` and scale 1 (mean `k`). Marsaglia–Tsang; for `k < 1`,
    /// `Gamma(k) = Gamma(k + 1) × U^(1/k)`. A non-positive or non-finite shape gives 0.
    pub fn gamma(&mut self, k: f64) -> f64 {
        if !(k.is_finite() && k > 0.0) {
            return 0.0;
        }
        if k < 1.0 {
            let u = self.uniform_open0();
            return self.gamma(k + 1.0) * u.powf(1.0 / k);
        }
        let d = k - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.uniform_open0();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }

    /// A whole number uniform on `lo..=hi` (`lo` when `hi < lo`).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        if span == 0 {
            return self.next_u64();
        }
        // Lemire's multiply-shift; the bias (< span / 2^64) is far below anything measured.
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    /// Sample means and variances against the distributions' own: exponential (1, 1),
    /// gamma(k) (k, k), normal (0, 1); 200,000 draws keep the standard error near 0.3%.
    #[test]
    fn moments_match_the_distributions() {
        let mut r = Rng::new(42);
        let n = 200_000;
        let moments = |xs: &[f64]| {
            let m = xs.iter().sum::<f64>() / xs.len() as f64;
            let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64;
            (m, v)
        };
        let e: Vec<f64> = (0..n).map(|_| r.exp1()).collect();
        let (m, v) = moments(&e);
        assert!(
            (m - 1.0).abs() < 0.02 && (v - 1.0).abs() < 0.05,
            "exp {m} {v}"
        );
        for k in [0.25, 1.0, 4.0] {
            let g: Vec<f64> = (0..n).map(|_| r.gamma(k)).collect();
            let (m, v) = moments(&g);
            assert!((m - k).abs() < 0.02 * k.max(1.0), "gamma({k}) mean {m}");
            assert!((v - k).abs() < 0.06 * k.max(1.0), "gamma({k}) var {v}");
        }
        let z: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let (m, v) = moments(&z);
        assert!(m.abs() < 0.01 && (v - 1.0).abs() < 0.02, "normal {m} {v}");
        let u: Vec<u64> = (0..n).map(|_| r.range_u64(3, 5)).collect();
        assert!(u.iter().all(|x| (3..=5).contains(x)));
        assert!(u.contains(&3) && u.contains(&5));
    }
}
