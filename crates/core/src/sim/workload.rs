//! The offered load: when requests are sent and how long they are, as `vllm bench serve`
//! generates them.
//!
//! Arrivals ([`Arrival`]): Poisson at a rate; gamma-distributed gaps with vLLM bench's
//! `--burstiness` (the gamma shape `k`: gaps have mean `1/rate` and coefficient of variation
//! `1/√k`, so `k = 1` is Poisson and `k < 1` is burstier; vLLM `benchmarks/serve.py`
//! `get_request`, `theta = 1 / (rate × burstiness)`); or all at once (`--request-rate inf`).
//! Independently, `max_concurrency` (vLLM bench's `--max-concurrency`) lets at most that many
//! requests be in flight: a request that arrives while all slots are busy is sent when one
//! frees, and its latencies are timed from when it is sent (as vLLM bench times them, inside
//! the semaphore). With `AllAtOnce` this is a fixed number of clients, each sending its next
//! request when the last returns.
//!
//! Lengths ([`Lengths`]): fixed; uniform on an inclusive range (vLLM bench's `random` dataset
//! with a range ratio); a list (pasted, cycled); or [`Lengths::ShareGpt`], a built-in stand-in
//! for vLLM bench's `--dataset-name sharegpt` (see [`SHAREGPT`] for its source and
//! parameters). The first `warmup` requests run but are left out of the statistics.

use crate::base::error::{CalcError, Phrase};
use crate::sim::rng::Rng;
use serde::{Deserialize, Serialize};

/// Most requests one run accepts; more are capped (with a note) so that a run stays bounded.
pub const MAX_REQUESTS: u64 = 200_000;
/// Longest prompt or output accepted, tokens (a context far beyond any model's).
pub const MAX_LEN: u64 = 10_000_000;

/// How request send times are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Arrival {
    /// Poisson arrivals at `rate` requests per second (exponential gaps).
    Poisson {
        /// Requests per second, > 0.
        rate: f64,
    },
    /// Gamma gaps with mean `1/rate` and shape `burstiness` (vLLM bench `--burstiness`;
    /// coefficient of variation `1/√burstiness`).
    Gamma {
        /// Requests per second, > 0.
        rate: f64,
        /// Gamma shape, > 0 (1 = Poisson).
        burstiness: f64,
    },
    /// Every request at time 0 (`--request-rate inf`).
    AllAtOnce,
}

impl Arrival {
    /// The arrival process of vLLM bench's `--request-rate R --burstiness B` (`rate` infinite
    /// means all at once; `burstiness` 1 means Poisson).
    pub fn from_rate(rate: f64, burstiness: f64) -> Arrival {
        if rate.is_infinite() && rate > 0.0 {
            Arrival::AllAtOnce
        } else if burstiness == 1.0 {
            Arrival::Poisson { rate }
        } else {
            Arrival::Gamma { rate, burstiness }
        }
    }

    /// The offered rate, requests per second (infinite when all at once).
    pub fn rate(&self) -> f64 {
        match self {
            Arrival::Poisson { rate } | Arrival::Gamma { rate, .. } => *rate,
            Arrival::AllAtOnce => f64::INFINITY,
        }
    }

    fn validate(&self) -> Result<(), CalcError> {
        let (rate, k) = match *self {
            Arrival::Poisson { rate } => (rate, 1.0),
            Arrival::Gamma { rate, burstiness } => (rate, burstiness),
            Arrival::AllAtOnce => return Ok(()),
        };
        if !(rate.is_finite() && rate > 0.0) {
            return Err(CalcError::out_of_range(
                Phrase::verbatim("request_rate"),
                rate,
                Phrase::tr("rng_sim_rate"),
            ));
        }
        if !(k.is_finite() && k > 0.0 && k <= 1.0e6) {
            return Err(CalcError::out_of_range(
                Phrase::verbatim("burstiness"),
                k,
                Phrase::tr("rng_positive"),
            ));
        }
        Ok(())
    }
}

/// The built-in ShareGPT-like length distribution.
///
/// Source of the means: vLLM bench's `sharegpt` sampler on ShareGPT V3 (it keeps prompts of
/// 4–1,024 tokens, outputs of at least 4, and prompt + output ≤ 2,048) realised 217.4 input
/// and 201.4 output tokens per request over 1,000 prompts (GPUStack Performance Lab, Qwen3-32B
/// rows of `tests/fixtures/serving_observations.csv`; 232.6 / 220.6 over its first 100).
/// Shape: log-normal prompt and output lengths, σ = 1.0 each (an assumption: the published
/// rows give means only), truncated to the sampler's bounds; μ is set so that the truncated
/// means equal 217 and 202 tokens (checked by a test on 100,000 draws).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogNormalLengths {
    /// μ of ln(prompt tokens).
    pub mu_input: f64,
    /// μ of ln(output tokens).
    pub mu_output: f64,
    /// σ of both logarithms.
    pub sigma: f64,
    /// Shortest prompt and output kept, tokens.
    pub min_len: u64,
    /// Longest prompt kept, tokens.
    pub max_input: u64,
    /// Longest prompt + output kept, tokens.
    pub max_total: u64,
}

/// The ShareGPT-like distribution's parameters ([`LogNormalLengths`] states their source).
pub const SHAREGPT: LogNormalLengths = LogNormalLengths {
    mu_input: 5.065,
    mu_output: 4.86,
    sigma: 1.0,
    min_len: 4,
    max_input: 1024,
    max_total: 2048,
};

/// How prompt and output lengths are drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Lengths {
    /// Every request `input` prompt tokens and `output` generated tokens.
    Fixed {
        /// Prompt tokens.
        input: u64,
        /// Output tokens.
        output: u64,
    },
    /// Uniform on inclusive ranges.
    Uniform {
        /// Prompt tokens, lowest and highest.
        input: (u64, u64),
        /// Output tokens, lowest and highest.
        output: (u64, u64),
    },
    /// The built-in ShareGPT-like distribution ([`SHAREGPT`]).
    ShareGpt,
    /// (prompt, output) pairs, used in order and cycled.
    List {
        /// The pairs.
        pairs: Vec<(u64, u64)>,
    },
}

impl Lengths {
    /// The longest prompt + output this distribution can draw.
    pub fn max_total(&self) -> u64 {
        match self {
            Lengths::Fixed { input, output } => input.saturating_add(*output),
            Lengths::Uniform { input, output } => input.1.saturating_add(output.1),
            Lengths::ShareGpt => SHAREGPT.max_total,
            Lengths::List { pairs } => pairs
                .iter()
                .map(|(i, o)| i.saturating_add(*o))
                .max()
                .unwrap_or(0),
        }
    }

    fn validate(&self) -> Result<(), CalcError> {
        let check = |name: &str, v: u64| {
            CalcError::whole_in(Phrase::verbatim(name), v, (1, MAX_LEN)).map(|_| ())
        };
        match self {
            Lengths::Fixed { input, output } => {
                check("input_len", *input)?;
                check("output_len", *output)
            }
            Lengths::Uniform { input, output } => {
                check("input_len", input.0)?;
                check("input_len", input.1)?;
                check("output_len", output.0)?;
                check("output_len", output.1)?;
                if input.0 > input.1 || output.0 > output.1 {
                    return Err(CalcError::BadValue {
                        key: "lengths".into(),
                        found: Phrase::verbatim(format!("{input:?} {output:?}")),
                        expected: Phrase::tr("exp_sim_range_order"),
                    });
                }
                Ok(())
            }
            Lengths::ShareGpt => Ok(()),
            Lengths::List { pairs } => {
                if pairs.is_empty() {
                    return Err(CalcError::EmptyInput);
                }
                for (i, o) in pairs {
                    check("input_len", *i)?;
                    check("output_len", *o)?;
                }
                Ok(())
            }
        }
    }

    fn draw(&self, rng: &mut Rng, index: usize) -> (u64, u64) {
        match self {
            Lengths::Fixed { input, output } => (*input, *output),
            Lengths::Uniform { input, output } => (
                rng.range_u64(input.0, input.1),
                rng.range_u64(output.0, output.1),
            ),
            Lengths::ShareGpt => sharegpt_draw(rng),
            Lengths::List { pairs } => pairs
                .get(index % pairs.len().max(1))
                .copied()
                .unwrap_or((1, 1)),
        }
    }
}

/// One draw of a truncated log-normal, rounded to whole tokens (rejection; the acceptance
/// probability is above 40% for the built-in parameters, so the loop is short; after 1,000
/// rejections the clamped value is used).
fn lognormal_in(rng: &mut Rng, mu: f64, sigma: f64, lo: u64, hi: u64) -> u64 {
    let mut x = lo;
    for _ in 0..1000 {
        let v = (mu + sigma * rng.normal()).exp().round();
        x = if v.is_finite() { v as u64 } else { hi };
        if (lo..=hi).contains(&x) {
            return x;
        }
    }
    x.clamp(lo, hi.max(lo))
}

fn sharegpt_draw(rng: &mut Rng) -> (u64, u64) {
    let s = SHAREGPT;
    let i = lognormal_in(rng, s.mu_input, s.sigma, s.min_len, s.max_input);
    let o = lognormal_in(rng, s.mu_output, s.sigma, s.min_len, s.max_total - i);
    (i, o)
}

/// The benchmark's load: arrivals, concurrency cap, lengths, request count, warm-up, seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// When requests become ready to send.
    pub arrival: Arrival,
    /// At most this many requests in flight (vLLM bench `--max-concurrency`).
    pub max_concurrency: Option<u64>,
    /// Prompt and output lengths.
    pub lengths: Lengths,
    /// Requests sent (vLLM bench `--num-prompts`), warm-up included.
    pub num_requests: u64,
    /// The first requests left out of the statistics.
    pub warmup: u64,
    /// The warm-up runs to its end before the first measured request is sent (vLLM bench's
    /// `--num-warmups` and aiperf's `--warmup-request-count` do so: the measured run then
    /// starts with every client sending at once); `false`: the warm-up is simply the
    /// stream's first requests.
    #[serde(default)]
    pub warmup_drained: bool,
    /// Seed of the arrival and length draws.
    pub seed: u64,
}

impl Default for WorkloadSpec {
    /// vLLM bench's defaults: 1,000 prompts, rate inf, seed 0 (lengths 1,024 / 128 as its
    /// `random` dataset).
    fn default() -> Self {
        WorkloadSpec {
            arrival: Arrival::AllAtOnce,
            max_concurrency: None,
            lengths: Lengths::Fixed {
                input: 1024,
                output: 128,
            },
            num_requests: 1000,
            warmup: 0,
            warmup_drained: false,
            seed: 0,
        }
    }
}

/// One generated request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// When it is ready to be sent, seconds from the start.
    pub ready_s: f64,
    /// Prompt tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

/// A checked workload: the requests and whether their count was capped.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// Requests in send order.
    pub requests: Vec<Request>,
    /// The count asked for when it was above [`MAX_REQUESTS`].
    pub capped_from: Option<u64>,
}

impl WorkloadSpec {
    /// Checks the spec (rates, lengths, counts) without drawing.
    pub fn validate(&self) -> Result<(), CalcError> {
        self.arrival.validate()?;
        self.lengths.validate()?;
        if self.num_requests == 0 {
            return Err(CalcError::range_error(
                Phrase::verbatim("num_prompts"),
                0,
                Phrase::tr("rng_whole_at_least_1"),
            ));
        }
        if self.max_concurrency == Some(0) {
            return Err(CalcError::range_error(
                Phrase::verbatim("max_concurrency"),
                0,
                Phrase::tr("rng_whole_at_least_1"),
            ));
        }
        Ok(())
    }

    /// Draws the requests (deterministic for the seed). Counts above [`MAX_REQUESTS`] are
    /// capped and the cap reported in [`Generated::capped_from`].
    pub fn generate(&self) -> Result<Generated, CalcError> {
        self.validate()?;
        let capped_from = (self.num_requests > MAX_REQUESTS).then_some(self.num_requests);
        let n = self.num_requests.min(MAX_REQUESTS);
        let n = usize::try_from(n).unwrap_or(0);
        let mut rng = Rng::new(self.seed);
        // Separate streams for gaps and lengths, so changing the rate keeps the lengths.
        let mut len_rng = Rng::new(self.seed ^ 0x5EED_1E57_0000_0001);
        let mut t = 0.0;
        let mut requests = Vec::with_capacity(n);
        for i in 0..n {
            let (input, output) = self.lengths.draw(&mut len_rng, i);
            requests.push(Request {
                ready_s: t,
                input,
                output,
            });
            t += match self.arrival {
                Arrival::Poisson { rate } => rng.exp1() / rate,
                Arrival::Gamma { rate, burstiness } => rng.gamma(burstiness) / (rate * burstiness),
                Arrival::AllAtOnce => 0.0,
            };
        }
        Ok(Generated {
            requests,
            capped_from,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(arrival: Arrival, lengths: Lengths, n: u64) -> WorkloadSpec {
        WorkloadSpec {
            arrival,
            lengths,
            num_requests: n,
            ..WorkloadSpec::default()
        }
    }

    /// The mean gap is 1/rate and the gaps' coefficient of variation is 1/√burstiness.
    #[test]
    fn gaps_have_the_rate_and_the_burstiness() {
        for (k, cv) in [(1.0, 1.0), (0.25, 2.0), (4.0, 0.5)] {
            let g = spec(
                Arrival::from_rate(5.0, k),
                Lengths::Fixed {
                    input: 8,
                    output: 8,
                },
                50_000,
            )
            .generate()
            .unwrap();
            let gaps: Vec<f64> = g
                .requests
                .windows(2)
                .map(|w| w[1].ready_s - w[0].ready_s)
                .collect();
            let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let sd = (gaps.iter().map(|x| (x - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
            assert!((m - 0.2).abs() < 0.2 * 0.03, "k={k}: mean gap {m}");
            assert!((sd / m - cv).abs() < cv * 0.05, "k={k}: cv {}", sd / m);
        }
    }

    /// The ShareGPT-like draws respect the sampler's bounds and have the stated means.
    #[test]
    fn sharegpt_like_means_and_bounds() {
        let g = spec(Arrival::AllAtOnce, Lengths::ShareGpt, 100_000)
            .generate()
            .unwrap();
        let n = g.requests.len() as f64;
        let mi = g.requests.iter().map(|r| r.input as f64).sum::<f64>() / n;
        let mo = g.requests.iter().map(|r| r.output as f64).sum::<f64>() / n;
        assert!((mi - 217.4).abs() < 217.4 * 0.03, "mean input {mi}");
        assert!((mo - 201.4).abs() < 201.4 * 0.03, "mean output {mo}");
        assert!(g.requests.iter().all(|r| r.input >= 4
            && r.input <= 1024
            && r.output >= 4
            && r.input + r.output <= 2048));
    }

    #[test]
    fn bad_specs_are_refused_and_counts_capped() {
        for rate in [0.0, -1.0, f64::NAN] {
            let s = spec(Arrival::Poisson { rate }, Lengths::ShareGpt, 10);
            assert!(s.generate().is_err(), "rate {rate}");
        }
        let s = spec(
            Arrival::AllAtOnce,
            Lengths::Fixed {
                input: 0,
                output: 1,
            },
            10,
        );
        assert!(s.generate().is_err());
        let s = spec(Arrival::AllAtOnce, Lengths::List { pairs: vec![] }, 10);
        assert!(s.generate().is_err());
        let g = spec(
            Arrival::AllAtOnce,
            Lengths::Fixed {
                input: 1,
                output: 1,
            },
            MAX_REQUESTS + 5,
        )
        .generate()
        .unwrap();
        assert_eq!(g.requests.len() as u64, MAX_REQUESTS);
        assert_eq!(g.capped_from, Some(MAX_REQUESTS + 5));
    }

    #[test]
    fn same_seed_same_requests() {
        let s = spec(Arrival::Poisson { rate: 3.0 }, Lengths::ShareGpt, 500);
        assert_eq!(s.generate().unwrap(), s.generate().unwrap());
        let mut t = s.clone();
        t.seed = 1;
        assert_ne!(s.generate().unwrap(), t.generate().unwrap());
    }
}
