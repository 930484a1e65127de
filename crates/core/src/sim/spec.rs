//! Speculative decoding in the simulated engine: a drafter proposes `k` tokens for every
//! decoding request, the target model verifies them in the request's next step (`1 + k`
//! tokens of it: the last sampled token and the drafts), and the request keeps the drafts up
//! to the first one rejected plus one token of its own (the correction or, when all `k` were
//! accepted, the bonus token).
//!
//! - **Acceptance**: draft position `i` is accepted with probability `a_i` given the ones
//!   before it were ([`SpecConfig::rates`]), so a step yields on average
//!   `1 + a_1 + a_1·a_2 + … + a_1·…·a_k` tokens, the *mean accepted length* benchmarks print
//!   ([`SpecConfig::mean_accepted_length`]). vLLM prints the products (`acceptance at token i`:
//!   [`SpecConfig::from_cumulative`]). A method's default is a first rate and a decay per
//!   position ([`SpecMethod::default_rates`], each sourced); a mean accepted length given
//!   instead scales the first rate of that shape ([`SpecConfig::from_accepted_length`]). The
//!   draws are deterministic: a hash of the request, its output so far and the position
//!   ([`accepted_drafts`]).
//! - **Verification**: the step holds `1 + k` tokens per decoding request in its linear work,
//!   its token budget and its KV blocks, and samples logits at each (the engines score every
//!   position); its attention reads each request's KV once, as a decode does (the `1 + k`
//!   queries share the keys).
//! - **Drafting**: MTP and EAGLE-3 run `k` sequential passes of one decoder layer and the
//!   LM head over the decoding requests ([`SpecMethod::draft_layers`]); n-gram lookup runs on
//!   the CPU beside the GPU (no time). A separate draft model is not modelled yet.
//!
//! Near the end of a request the drafts are capped by the tokens it has left, as the engines
//! do. Memory: the MTP module's weights are loaded when the method is MTP
//! (`ModelDesc::load_mtp`); an EAGLE-3 head's weights (one decoder layer and a reduced LM
//! head, about 1–2 GB) and its KV are not counted yet.

use crate::base::error::{CalcError, Phrase};
use serde::{Deserialize, Serialize};

/// How the drafts are proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecMethod {
    /// The checkpoint's own multi-token-prediction module (DeepSeek-V3/R1, Kimi, GLM, Qwen3-Next
    /// and 3.5), reused for every draft position.
    Mtp,
    /// An EAGLE-3 head: one decoder layer fed the target's hidden states.
    Eagle3,
    /// Prompt lookup (n-gram matching against the context), on the CPU.
    Ngram,
}

impl SpecMethod {
    /// Every method by its command-line name.
    pub const ALL: [(&'static str, SpecMethod); 3] = [
        ("mtp", SpecMethod::Mtp),
        ("eagle3", SpecMethod::Eagle3),
        ("ngram", SpecMethod::Ngram),
    ];

    /// The method named `s` (`mtp`, `eagle3`, `ngram`).
    pub fn parse(s: &str) -> Option<SpecMethod> {
        Self::ALL
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(s.trim()))
            .map(|&(_, m)| m)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SpecMethod::Mtp => "mtp",
            SpecMethod::Eagle3 => "eagle3",
            SpecMethod::Ngram => "ngram",
        }
    }

    /// Decoder layers one draft pass runs on the GPU (0: the drafts come from the CPU).
    pub fn draft_layers(self) -> f64 {
        match self {
            SpecMethod::Mtp | SpecMethod::Eagle3 => 1.0,
            SpecMethod::Ngram => 0.0,
        }
    }

    /// The conditional acceptance rates assumed when none are given, `(first, decay)`: position
    /// `i` accepts with `first × decay^(i−1)` given the ones before it were. Sources:
    /// - MTP **(0.87, 0.72)**: the DeepSeek-V3 Technical Report (§5.4.3) gives 85–90% for the
    ///   second token (the first draft); the decay makes three drafts yield 2.65 tokens a step,
    ///   the mean accepted length SGLang's pull request 20809 printed for DeepSeek-V3.2's MTP
    ///   with 3 drafts (`tests/fixtures/spec_decode_published.csv`);
    /// - EAGLE-3 **(0.743, 1)**: Llama-3.1-8B-Instruct with its EAGLE-3 head on MT-Bench, 7 drafts,
    ///   mean accepted length 3.53 (vLLM issue 26191, citing pull request 17504); one rate for
    ///   every position, as EAGLE-3's training-time test aims at;
    /// - n-gram **(0.4, 1)**: TensorRT-LLM's n-gram drafts for Llama-4 Scout on B200, mean
    ///   accepted length 1.66 with 5 drafts (the fixture above).
    ///
    /// Each is one model on one dataset; set the measured rates for yours.
    pub fn default_rates(self) -> (f64, f64) {
        match self {
            SpecMethod::Mtp => (0.87, 0.72),
            SpecMethod::Eagle3 => (0.743, 1.0),
            SpecMethod::Ngram => (0.4, 1.0),
        }
    }

    /// The largest number of drafts per step accepted (the engines' own limits are of this
    /// order; a longer chain has nothing left to gain at any acceptance rate below 0.95).
    pub const MAX_K: u64 = 16;
}

/// Speculative decoding as one engine runs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpecConfig {
    pub method: SpecMethod,
    /// Draft tokens proposed per step (vLLM's `num_speculative_tokens`, SGLang's
    /// `--speculative-num-steps` for a chain, TensorRT-LLM's `max_draft_len`).
    pub k: u64,
    /// Conditional acceptance rate of each draft position (the first `k` are used), each in
    /// (0, 1).
    pub rates: [f64; SpecMethod::MAX_K as usize],
}

impl SpecConfig {
    /// `k` drafts of `method` at the method's default rates.
    pub fn new(method: SpecMethod, k: u64) -> SpecConfig {
        let (first, decay) = method.default_rates();
        Self::shaped(method, k, first, decay)
    }

    /// Rates `first × decay^(i−1)`.
    fn shaped(method: SpecMethod, k: u64, first: f64, decay: f64) -> SpecConfig {
        let mut rates = [0.0; SpecMethod::MAX_K as usize];
        let mut a = first;
        for r in &mut rates {
            *r = a;
            a *= decay;
        }
        SpecConfig { method, k, rates }
    }

    /// `k` drafts accepted at one rate `a` per position, given the ones before were.
    pub fn uniform(method: SpecMethod, k: u64, a: f64) -> SpecConfig {
        Self::shaped(method, k, a, 1.0)
    }

    /// The rates from vLLM's printed per-position figures (`acceptance at token i`: the share
    /// of drafts whose first `i + 1` positions were all accepted), `k` of them; a position
    /// beyond the list keeps the last conditional rate.
    pub fn from_cumulative(
        method: SpecMethod,
        cumulative: &[f64],
    ) -> Result<SpecConfig, CalcError> {
        let bad = |v: f64| CalcError::BadValue {
            key: "spec_acceptance_per_position".into(),
            found: Phrase::verbatim(v.to_string()),
            expected: Phrase::tr("exp_spec_cumulative"),
        };
        let k = cumulative.len() as u64;
        let mut s = Self::uniform(method, k.max(1), 0.5);
        let mut prev = 1.0;
        for (i, &p) in cumulative.iter().enumerate() {
            if !(p > 0.0 && p < prev) {
                return Err(bad(p));
            }
            if let Some(r) = s.rates.get_mut(i) {
                *r = p / prev;
            }
            prev = p;
        }
        s.validate()?;
        Ok(s)
    }

    /// Checks `k` (1 to [`SpecMethod::MAX_K`]) and the rates of its positions (in (0, 1)).
    pub fn validate(&self) -> Result<(), CalcError> {
        if self.k == 0 || self.k > SpecMethod::MAX_K {
            return Err(CalcError::BadValue {
                key: "spec_k".into(),
                found: Phrase::verbatim(self.k.to_string()),
                expected: Phrase::tr("exp_spec_k"),
            });
        }
        for &a in self.rates.iter().take(self.k as usize) {
            if !(a > 0.0 && a < 1.0) {
                return Err(CalcError::BadValue {
                    key: "spec_acceptance".into(),
                    found: Phrase::verbatim(a.to_string()),
                    expected: Phrase::tr("exp_spec_acceptance"),
                });
            }
        }
        Ok(())
    }

    /// Tokens a decoding request gains per step on average:
    /// `1 + a_1 + a_1·a_2 + … + a_1·…·a_k`.
    pub fn mean_accepted_length(&self) -> f64 {
        let (mut sum, mut p) = (1.0, 1.0);
        for &a in self.rates.iter().take(self.k as usize) {
            p *= a;
            sum += p;
        }
        sum
    }

    /// The method's default shape of rates scaled (its first rate found by bisection, the
    /// decay kept) so that `k` drafts yield `length` tokens a step on average; `length` must lie
    /// in (1, 1 + k).
    pub fn from_accepted_length(
        method: SpecMethod,
        k: u64,
        length: f64,
    ) -> Result<SpecConfig, CalcError> {
        let top = 1.0 + k as f64;
        if !(length > 1.0 && length < top) || k == 0 || k > SpecMethod::MAX_K {
            return Err(CalcError::BadValue {
                key: "spec_accepted_length".into(),
                found: Phrase::verbatim(length.to_string()),
                expected: Phrase::tr("exp_spec_accepted_length"),
            });
        }
        let decay = method.default_rates().1;
        let mut s = solve(length, |a| Self::shaped(method, k, a, decay));
        if s.validate().is_err() {
            // A length the decayed shape cannot reach: one rate for every position.
            s = solve(length, |a| Self::uniform(method, k, a));
        }
        s.validate()?;
        Ok(s)
    }
}

/// The configuration `make(a)` whose mean accepted length is `length`, its first rate `a` found
/// by bisection on (0, 1) (the length rises with it).
fn solve(length: f64, make: impl Fn(f64) -> SpecConfig) -> SpecConfig {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if make(mid).mean_accepted_length() < length {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    make(0.5 * (lo + hi))
}

/// SplitMix64's output function: a well-mixed 64-bit value from any input.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Drafts accepted of `drafts` proposed for request `id` with `generated` output tokens so
/// far: each position drawn in turn (uniform from a hash of the three), accepted while the
/// draw is below its rate in `rates`. Deterministic: the same request at the same point draws
/// the same.
pub fn accepted_drafts(id: u32, generated: u64, drafts: u64, rates: &[f64]) -> u64 {
    let base = mix(u64::from(id) ^ mix(generated));
    let mut n = 0;
    while n < drafts {
        let u = (mix(base ^ (n + 1)) >> 11) as f64 / (1u64 << 53) as f64;
        let a = rates.get(n as usize).copied().unwrap_or(0.0);
        if u >= a {
            break;
        }
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mean accepted length is the sum of the products, the rate recovered from a
    /// length gives that length back, and vLLM's cumulative figures give their own sum.
    #[test]
    fn lengths_and_rates() {
        let s = SpecConfig::uniform(SpecMethod::Mtp, 3, 0.5);
        assert!((s.mean_accepted_length() - (1.0 + 0.5 + 0.25 + 0.125)).abs() < 1e-12);
        let back = SpecConfig::from_accepted_length(SpecMethod::Eagle3, 3, 1.875).expect("len");
        assert!((back.mean_accepted_length() - 1.875).abs() < 1e-9);
        assert!((back.rates[0] - 0.5).abs() < 1e-9, "{}", back.rates[0]);
        let mtp = SpecConfig::from_accepted_length(SpecMethod::Mtp, 3, 2.65).expect("len");
        assert!((mtp.mean_accepted_length() - 2.65).abs() < 1e-9);
        assert!(SpecConfig::from_accepted_length(SpecMethod::Mtp, 3, 4.0).is_err());
        assert!(SpecConfig::from_accepted_length(SpecMethod::Mtp, 3, 1.0).is_err());
        // Near the top only one rate for every position reaches the length.
        let high = SpecConfig::from_accepted_length(SpecMethod::Mtp, 3, 3.9).expect("len");
        assert!((high.mean_accepted_length() - 3.9).abs() < 1e-9);
        let v = [0.58, 0.34, 0.22];
        let c = SpecConfig::from_cumulative(SpecMethod::Eagle3, &v).expect("rates");
        assert_eq!(c.k, 3);
        assert!((c.mean_accepted_length() - (1.0 + v.iter().sum::<f64>())).abs() < 1e-12);
        assert!(SpecConfig::from_cumulative(SpecMethod::Eagle3, &[0.3, 0.4]).is_err());
        assert!(SpecConfig::new(SpecMethod::Eagle3, 0).validate().is_err());
        assert!(SpecConfig::uniform(SpecMethod::Eagle3, 3, 1.0)
            .validate()
            .is_err());
    }

    /// The defaults reproduce the figures they are sourced from: MTP's three drafts 2.65
    /// tokens a step, EAGLE-3's seven 3.53, n-gram's five 1.66 (within rounding).
    #[test]
    fn defaults_match_their_sources() {
        for (m, k, want) in [
            (SpecMethod::Mtp, 3, 2.65),
            (SpecMethod::Eagle3, 7, 3.53),
            (SpecMethod::Ngram, 5, 1.66),
        ] {
            let got = SpecConfig::new(m, k).mean_accepted_length();
            assert!((got - want).abs() < 0.03, "{m:?}: {got}");
        }
    }

    /// Over many draws the accepted drafts average the rates' products, and a draw repeats.
    #[test]
    fn draws_follow_the_rates() {
        let s = SpecConfig::new(SpecMethod::Mtp, 4);
        let n = 200_000u32;
        let sum: u64 = (0..n).map(|i| accepted_drafts(i, 17, 4, &s.rates)).sum();
        let want = s.mean_accepted_length() - 1.0;
        let got = sum as f64 / f64::from(n);
        assert!((got - want).abs() < 0.01, "{got} {want}");
        assert_eq!(
            accepted_drafts(5, 9, 4, &s.rates),
            accepted_drafts(5, 9, 4, &s.rates)
        );
        assert!((0..1000).all(|i| accepted_drafts(i, 3, 4, &s.rates) <= 4));
    }

    #[test]
    fn methods_by_name() {
        for (n, m) in SpecMethod::ALL {
            assert_eq!(SpecMethod::parse(n), Some(m));
            assert_eq!(m.name(), n);
        }
        assert_eq!(SpecMethod::parse("draft"), None);
    }
}
