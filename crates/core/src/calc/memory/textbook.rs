//! The textbook's budget: `⌊(capacity − weights) / KV per request⌋`, and what would fit.

use super::activation::{activation_estimate, ActivationParams};
use super::helpers::{gib_str, gib_sym, out_of_range};
use super::kv_profile::KvProfile;
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::expr::Expr;
use crate::base::units::Bytes;
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// Inputs of the textbook rule, as plain quantities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextbookInputs {
    /// Capacity for the theoretical count: the marketed figure read as GiB.
    pub marketed_capacity: Bytes,
    /// Capacity for the practical count: what the driver reports.
    pub usable_capacity: Bytes,
    /// Weight bytes.
    pub weights: Bytes,
    /// KV bytes of one request at the chosen length.
    pub kv_per_request: Bytes,
    /// Activation reserve kept free for the practical count.
    pub activation_reserve: Bytes,
}

/// The textbook's budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextbookBudget {
    /// `marketed − weights`, at least 0.
    pub budget_theoretical: Bytes,
    /// `usable − weights − reserve`, at least 0.
    pub budget_practical: Bytes,
    /// Concurrent requests in theory.
    pub theoretical: u64,
    /// Concurrent requests in practice.
    pub practical: u64,
    /// Rule of thumb: GPU memory ≈ 2 × model size.
    pub rule_of_thumb: Bytes,
    /// Derivations: theoretical, practical, rule of thumb.
    pub derivations: Vec<Derivation>,
}

/// The textbook rule: `⌊(capacity − weights) / KV per request⌋`, in theory (marketed
/// capacity) and in practice (driver-reported capacity minus an activation reserve).
/// A request of 0 bytes is counted as fitting `u64::MAX` times.
pub fn textbook_budget(inp: &TextbookInputs) -> TextbookBudget {
    let bt = inp.marketed_capacity - inp.weights;
    let theoretical = requests_in(bt, inp.kv_per_request);
    let (bp, practical) = practical_count(inp);
    // Saturating, as a byte count times a count is.
    let rot = rule_of_thumb_expr(inp.weights)
        .exact("ovf_weight_bytes")
        .map_or(Bytes(u64::MAX), |r| Bytes(r.ceil()));
    TextbookBudget {
        budget_theoretical: bt,
        budget_practical: bp,
        theoretical,
        practical,
        rule_of_thumb: rot,
        derivations: vec![
            theory_derivation(inp, theoretical),
            practice_derivation(inp, practical),
            rule_of_thumb_derivation(inp.weights, rot),
        ],
    }
}

/// The term `W`: the weight bytes, in GiB.
fn weights_term(weights: Bytes) -> Term {
    Term::new(
        "W",
        "term_weights",
        gib_str(weights),
        "GiB",
        Source::Derived("weights_bytes".into()),
    )
}

/// The term `KV_req`: the KV bytes of one request, in GiB.
fn kv_term(per: Bytes) -> Term {
    Term::new(
        "KV_req",
        "term_kv_per_request",
        gib_str(per),
        "GiB",
        Source::Derived("kv_per_request".into()),
    )
}

/// The theoretical count's derivation: `N = ⌊(C_marketed − W) / KV_req⌋`.
fn theory_derivation(inp: &TextbookInputs, theoretical: u64) -> Derivation {
    let e = Expr::named(
        "N",
        Expr::floor(Expr::over(
            Expr::minus(
                gib_sym("C_marketed", inp.marketed_capacity),
                gib_sym("W", inp.weights),
            ),
            gib_sym("KV_req", inp.kv_per_request),
        )),
    );
    Derivation {
        result_key: "drv_n_requests".into(),
        result: theoretical.to_string(),
        terms: vec![
            Term::new(
                "C_marketed",
                "term_capacity_marketed",
                gib_str(inp.marketed_capacity),
                "GiB",
                Source::Catalog("memory_marketed_gb (read as GiB)".into()),
            ),
            weights_term(inp.weights),
            kv_term(inp.kv_per_request),
        ],
        notes: vec!["note_marketed_as_gib".into()],
        ..Derivation::of("mem_requests_theoretical", &e)
    }
}

/// The practical count's derivation: `N = ⌊(C_usable − W − A) / KV_req⌋`.
fn practice_derivation(inp: &TextbookInputs, practical: u64) -> Derivation {
    let e = Expr::named(
        "N",
        Expr::floor(Expr::over(
            Expr::minus(
                Expr::minus(
                    gib_sym("C_usable", inp.usable_capacity),
                    gib_sym("W", inp.weights),
                ),
                gib_sym("A", inp.activation_reserve),
            ),
            gib_sym("KV_req", inp.kv_per_request),
        )),
    );
    Derivation {
        result_key: "drv_n_requests".into(),
        result: practical.to_string(),
        terms: vec![
            Term::new(
                "C_usable",
                "term_capacity_usable",
                gib_str(inp.usable_capacity),
                "GiB",
                Source::Catalog("memory_reported (driver)".into()),
            ),
            weights_term(inp.weights),
            Term::new(
                "A",
                "term_activation_reserve",
                gib_str(inp.activation_reserve),
                "GiB",
                Source::Derived("mem_activation_estimate".into()),
            ),
            kv_term(inp.kv_per_request),
        ],
        notes: vec!["note_activation_reserve".into()],
        ..Derivation::of("mem_requests_practical", &e)
    }
}

/// The rule of thumb, `M ≈ 2 × W`.
fn rule_of_thumb_expr(weights: Bytes) -> Expr {
    Expr::approx(
        "M",
        Expr::mul([Expr::int(2), Expr::sym("W", weights.fmt_gb(), weights.0)]),
    )
}

/// The rule of thumb's derivation ([`rule_of_thumb_expr`]), `rot` bytes.
fn rule_of_thumb_derivation(weights: Bytes, rot: Bytes) -> Derivation {
    Derivation {
        result: rot.fmt_both(false),
        terms: vec![weights_term(weights)],
        notes: vec!["note_rule_of_thumb".into()],
        ..Derivation::of("mem_rule_of_thumb", &rule_of_thumb_expr(weights))
    }
}

/// How many requests of `per` bytes fit in `budget` (`u64::MAX` for requests of 0 bytes).
fn requests_in(budget: Bytes, per: Bytes) -> u64 {
    budget.0.checked_div(per.0).unwrap_or(u64::MAX)
}

/// The practical budget `usable − weights − reserve` (at least 0) and its request count, as
/// [`textbook_budget`] finds them, without the derivations' texts.
fn practical_count(inp: &TextbookInputs) -> (Bytes, u64) {
    let bp = inp.usable_capacity - inp.weights - inp.activation_reserve;
    (bp, requests_in(bp, inp.kv_per_request))
}

/// A computed way to make a model fit when not even one request does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Suggestion {
    /// Shard over this many GPUs of the same kind (tensor parallelism).
    TensorParallel {
        /// GPUs.
        gpus: u64,
        /// Requests that then fit (practical count, pooled memory).
        requests: u64,
    },
    /// Store the weights at a lower precision.
    LowerPrecision {
        /// The precision.
        dtype: Dtype,
        /// Weight bytes at that precision.
        weights: Bytes,
        /// Requests that then fit.
        requests: u64,
    },
    /// Serve shorter requests.
    ShorterContext {
        /// The longest request length (tokens) for which one request fits.
        max_tokens: u64,
    },
}

/// "What would fit" when the practical count is 0: the fewest GPUs (2, 4, 8, …, 64) whose
/// pooled memory holds the weights, one reserve per GPU and at least one request; each lower
/// weight precision in `alternatives` (precision, weight bytes) that fits at least one
/// request; and the longest request that fits on one GPU (if the weights fit at all).
/// Returns an empty list when at least one request already fits.
pub fn what_would_fit(
    inp: &TextbookInputs,
    profile: &KvProfile,
    context: u64,
    alternatives: &[(Dtype, Bytes)],
) -> Vec<Suggestion> {
    let (base_budget, base_practical) = practical_count(inp);
    if base_practical > 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let per_req = profile.per_request(context);
    let mut n = 2u64;
    while n <= 64 {
        let pooled = (inp.usable_capacity * n) - inp.weights - (inp.activation_reserve * n);
        if per_req.0 > 0 && pooled >= per_req {
            out.push(Suggestion::TensorParallel {
                gpus: n,
                requests: pooled.0 / per_req.0,
            });
            break;
        }
        n *= 2;
    }
    for (dtype, w) in alternatives {
        if *w >= inp.weights {
            continue;
        }
        let (_, practical) = practical_count(&TextbookInputs {
            weights: *w,
            ..*inp
        });
        if practical > 0 {
            out.push(Suggestion::LowerPrecision {
                dtype: *dtype,
                weights: *w,
                requests: practical,
            });
        }
    }
    if let Some(l) = profile.max_len_within(base_budget) {
        if l > 0 && l < context {
            out.push(Suggestion::ShorterContext { max_tokens: l });
        }
    }
    out
}

/// The textbook budget for a model on one catalog accelerator: theoretical from the marketed
/// capacity read as GiB, practical from [`Accelerator::capacity`] minus
/// [`activation_estimate`] with vLLM's default chunk for that GPU. The report keeps a
/// [`TextbookGpu`] per GPU (and for tensor parallelism) instead; this is the one-GPU shortcut
/// the worked examples and charts use.
pub fn textbook_for(
    model: &ModelDesc,
    acc: &Accelerator,
    weights: Bytes,
    profile: &KvProfile,
    context: u64,
) -> Result<(TextbookInputs, TextbookBudget, Derivation), CalcError> {
    let gpu = TextbookGpu::new(model, acc, 1)?;
    let inp = gpu.inputs(weights, profile.per_request(context));
    Ok((inp, textbook_budget(&inp), gpu.activation))
}

/// What the textbook rule reads of one GPU for a model ([`textbook_for`]): the two
/// capacities and the activation reserve with its derivation. None of it depends on the
/// weights' share or on the request length, so it can be kept while those are edited.
#[derive(Debug, Clone, PartialEq)]
pub struct TextbookGpu {
    /// The marketed capacity read as GiB.
    pub marketed_capacity: Bytes,
    /// What the driver reports ([`Accelerator::capacity`]).
    pub usable_capacity: Bytes,
    /// [`activation_estimate`] with vLLM's default chunk for that GPU.
    pub activation_reserve: Bytes,
    /// The reserve's derivation.
    pub activation: Derivation,
}

impl TextbookGpu {
    /// `model` on `acc`, one GPU of a tensor-parallel group of `tp`. Errors: a marketed
    /// capacity out of range, a model whose activations cannot be estimated.
    pub fn new(model: &ModelDesc, acc: &Accelerator, tp: u64) -> Result<TextbookGpu, CalcError> {
        let marketed = Bytes::from_gib_f64(acc.memory_marketed_gb).ok_or_else(|| {
            out_of_range(
                "memory_marketed_gb",
                acc.memory_marketed_gb,
                Phrase::tr("rng_positive"),
            )
        })?;
        let usable = acc.capacity();
        let ap = ActivationParams {
            tp: tp.max(1),
            ..ActivationParams::defaults(usable)
        };
        let (reserve, activation) = activation_estimate(model, &ap)?;
        Ok(TextbookGpu {
            marketed_capacity: marketed,
            usable_capacity: usable,
            activation_reserve: reserve,
            activation,
        })
    }

    /// The rule's inputs with these weights per GPU and this KV cache per request.
    pub fn inputs(&self, weights: Bytes, kv_per_request: Bytes) -> TextbookInputs {
        TextbookInputs {
            marketed_capacity: self.marketed_capacity,
            usable_capacity: self.usable_capacity,
            weights,
            kv_per_request,
            activation_reserve: self.activation_reserve,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::GIB;

    // Llama-2-7b: 6,738,415,616 params × 2 B; KV/token = 2 × 32 × 32 × 128 × 2 = 524,288 B.
    const W_7B: Bytes = Bytes(6_738_415_616 * 2);
    const KV_TOK_7B: u64 = 2 * 32 * 32 * 128 * 2;

    #[test]
    fn textbook_counts_5_4_and_17_16() {
        // KV per request at 4,096 tokens: 524,288 × 4,096 = 2^31 B = 2 GiB.
        // A10G theory: (24 GiB − 12.551 GiB) / 2 GiB = 5.72 → 5.
        // A10G practice: (23,028 MiB = 22.488 GiB − 12.551 − A) / 2 = 4.97 − A/2 → 4.
        // L40S theory: (48 − 12.551) / 2 = 17.72 → 17; practice (44.988 − 12.551 − A)/2 → 16
        // for any reserve A in [0, 0.437) GiB.
        let profile = KvProfile::uniform(32, Bytes(KV_TOK_7B / 32));
        let kv = profile.per_request(4096);
        assert_eq!(kv, Bytes(2 * GIB));
        for (marketed, mib, theory, practice) in [(24, 23_028, 5, 4), (48, 46_068, 17, 16)] {
            for reserve in [Bytes(0), Bytes(GIB * 436 / 1000)] {
                let b = textbook_budget(&TextbookInputs {
                    marketed_capacity: Bytes::from_gib(marketed),
                    usable_capacity: Bytes::from_mib(mib),
                    weights: W_7B,
                    kv_per_request: kv,
                    activation_reserve: reserve,
                });
                assert_eq!((b.theoretical, b.practical), (theory, practice));
            }
        }
        // A reserve of 0.44 GiB would turn the L40S's 16 into 15: the window is real.
        let b = textbook_budget(&TextbookInputs {
            marketed_capacity: Bytes::from_gib(48),
            usable_capacity: Bytes::from_mib(46_068),
            weights: W_7B,
            kv_per_request: kv,
            activation_reserve: Bytes(GIB * 44 / 100),
        });
        assert_eq!(b.practical, 15);
    }

    #[test]
    fn what_would_fit_is_computed() {
        // Llama-2-7b fp16 (12.55 GiB) on a 12 GiB card with a 0.19 GiB reserve: nothing fits.
        // TP 2: 24 − 12.55 − 2 × 0.19 = 11.07 GiB → 5 requests of 2 GiB.
        // int8 (6.28 GiB): 12 − 6.28 − 0.19 = 5.53 → 2; int4 (3.14 GiB): 8.67 → 4.
        let p = KvProfile::uniform(32, Bytes(KV_TOK_7B / 32));
        let inp = TextbookInputs {
            marketed_capacity: Bytes::from_gib(12),
            usable_capacity: Bytes::from_gib(12),
            weights: W_7B,
            kv_per_request: p.per_request(4096),
            activation_reserve: Bytes(201_588_736),
        };
        assert_eq!(textbook_budget(&inp).practical, 0);
        let s = what_would_fit(
            &inp,
            &p,
            4096,
            &[
                (Dtype::Int8, Bytes(W_7B.0 / 2)),
                (Dtype::Int4, Bytes(W_7B.0 / 4)),
            ],
        );
        let want_tp = (24 * GIB - W_7B.0 - 2 * 201_588_736) / (2 * GIB);
        let want_i8 = (12 * GIB - W_7B.0 / 2 - 201_588_736) / (2 * GIB);
        let want_i4 = (12 * GIB - W_7B.0 / 4 - 201_588_736) / (2 * GIB);
        assert_eq!(
            s,
            vec![
                Suggestion::TensorParallel {
                    gpus: 2,
                    requests: want_tp
                },
                Suggestion::LowerPrecision {
                    dtype: Dtype::Int8,
                    weights: Bytes(W_7B.0 / 2),
                    requests: want_i8
                },
                Suggestion::LowerPrecision {
                    dtype: Dtype::Int4,
                    weights: Bytes(W_7B.0 / 4),
                    requests: want_i4
                },
            ]
        );
        // With the weights fitting but 4,096 tokens not: a shorter context is suggested.
        let inp2 = TextbookInputs {
            usable_capacity: Bytes::from_gib(14),
            ..inp
        };
        let s2 = what_would_fit(&inp2, &p, 4096, &[]);
        let budget = 14 * GIB - W_7B.0 - 201_588_736;
        assert!(s2.contains(&Suggestion::ShorterContext {
            max_tokens: budget / KV_TOK_7B
        }));
    }
}
