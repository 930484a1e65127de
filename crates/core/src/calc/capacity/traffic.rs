//! What the planner is asked: the traffic (an average rate, its peak multiplier and up to
//! [`MAX_BUCKETS`] prompt/output length buckets whose shares sum to 1), the latency targets and the
//! candidate accelerators, each with the checks it must pass.

use crate::base::error::{CalcError, Phrase};
use crate::base::units::Seconds;
use serde::{Deserialize, Serialize};

/// At most this many length buckets.
pub const MAX_BUCKETS: usize = 5;

/// Tolerance on the sum of bucket shares.
pub const SHARE_TOLERANCE: f64 = 1e-6;

/// One class of requests: prompt and output lengths and its share of the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Prompt tokens per request.
    pub input_len: u64,
    /// Generated tokens per request.
    pub output_len: u64,
    /// Fraction of requests, 0–1; all shares sum to 1.
    pub share: f64,
}

/// The traffic to serve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// Average request rate, requests per second (> 0).
    pub avg_rate_rps: f64,
    /// Peak rate / average rate (≥ 1; the chapter's Black Friday: 4 and more).
    pub peak_multiplier: f64,
    /// Length buckets (1 to [`MAX_BUCKETS`]); one bucket = the mean lengths.
    pub buckets: Vec<Bucket>,
}

impl Traffic {
    /// One bucket of mean lengths.
    pub fn mean(
        avg_rate_rps: f64,
        peak_multiplier: f64,
        input_len: u64,
        output_len: u64,
    ) -> Traffic {
        Traffic {
            avg_rate_rps,
            peak_multiplier,
            buckets: vec![Bucket {
                input_len,
                output_len,
                share: 1.0,
            }],
        }
    }

    /// Peak request rate, requests per second.
    pub fn peak_rate_rps(&self) -> f64 {
        self.avg_rate_rps * self.peak_multiplier
    }

    /// Share-weighted mean prompt and output lengths, tokens.
    pub fn mean_lengths(&self) -> (f64, f64) {
        let i = self
            .buckets
            .iter()
            .map(|b| b.share * b.input_len as f64)
            .sum();
        let o = self
            .buckets
            .iter()
            .map(|b| b.share * b.output_len as f64)
            .sum();
        (i, o)
    }

    /// Checks the rates, multiplier, lengths and shares.
    pub fn validate(&self) -> Result<(), CalcError> {
        let r = self.avg_rate_rps;
        if !(r.is_finite() && r > 0.0 && r <= 1e9) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_avg_rate"),
                r,
                Phrase::tr("rng_above0_at_most").val("max", "10^9"),
            ));
        }
        let p = self.peak_multiplier;
        if !(p.is_finite() && (1.0..=1000.0).contains(&p)) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_peak_mult"),
                p,
                Phrase::tr("rng_peak_mult"),
            ));
        }
        if self.buckets.is_empty() || self.buckets.len() > MAX_BUCKETS {
            return Err(CalcError::range_error(
                Phrase::tr("fld_buckets"),
                self.buckets.len(),
                Phrase::tr("rng_from_to")
                    .val("lo", 1)
                    .val("hi", MAX_BUCKETS),
            ));
        }
        for b in &self.buckets {
            for (name, v) in [
                ("fld_input_len", b.input_len),
                ("fld_output_len", b.output_len),
            ] {
                if v == 0 || v > 10_000_000 {
                    return Err(CalcError::range_error(
                        Phrase::tr(name),
                        v,
                        Phrase::tr("rng_tokens_from_to")
                            .val("lo", 1)
                            .val("hi", "10,000,000"),
                    ));
                }
            }
            if !(b.share.is_finite() && b.share > 0.0 && b.share <= 1.0) {
                return Err(CalcError::out_of_range(
                    Phrase::tr("fld_bucket_share"),
                    b.share,
                    Phrase::tr("rng_above0_at_most").val("max", 1),
                ));
            }
        }
        let sum: f64 = self.buckets.iter().map(|b| b.share).sum();
        if (sum - 1.0).abs() > SHARE_TOLERANCE {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_share_sum"),
                sum,
                Phrase::tr("rng_share_sum"),
            ));
        }
        Ok(())
    }
}

/// Latency targets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Time to first token at most this.
    pub ttft: Seconds,
    /// Time per output token at most this.
    pub tpot: Seconds,
}

impl Targets {
    /// From milliseconds.
    pub fn from_ms(ttft_ms: f64, tpot_ms: f64) -> Targets {
        Targets {
            ttft: Seconds::from_ms(ttft_ms),
            tpot: Seconds::from_ms(tpot_ms),
        }
    }

    pub(super) fn validate(&self) -> Result<(), CalcError> {
        for (name, v) in [
            ("fld_ttft_target", self.ttft.ms()),
            ("fld_tpot_target", self.tpot.ms()),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 3_600_000.0) {
                return Err(CalcError::out_of_range(
                    Phrase::tr(name),
                    v,
                    Phrase::tr("rng_above0_at_most").val("max", "3,600,000 ms"),
                ));
            }
        }
        Ok(())
    }
}

/// One candidate accelerator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Catalog id or alias.
    pub gpu: String,
    /// GPUs in one node; `None` = [`default_gpus_per_node`](super::default_gpus_per_node).
    pub gpus_per_node: Option<u32>,
    /// Price per GPU-hour, US dollars; `None` = the catalog price.
    pub price_usd_per_gpu_hour: Option<f64>,
}

impl Candidate {
    /// A catalog GPU with its default node size and price.
    pub fn new(gpu: &str) -> Candidate {
        Candidate {
            gpu: gpu.to_string(),
            gpus_per_node: None,
            price_usd_per_gpu_hour: None,
        }
    }
}

/// Everything the planner needs besides the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanInputs {
    /// Traffic and lengths.
    pub traffic: Traffic,
    /// Latency targets.
    pub targets: Targets,
    /// Candidate accelerators.
    pub candidates: Vec<Candidate>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_must_sum_to_one() {
        let mut t = Traffic::mean(1.0, 4.0, 100, 100);
        t.buckets = vec![
            Bucket {
                input_len: 100,
                output_len: 100,
                share: 0.5,
            },
            Bucket {
                input_len: 10,
                output_len: 10,
                share: 0.4,
            },
        ];
        assert!(matches!(t.validate(), Err(CalcError::OutOfRange { .. })));
        t.buckets = vec![
            Bucket {
                input_len: 100,
                output_len: 100,
                share: 1.0
            };
            6
        ];
        assert!(t.validate().is_err());
    }
}
