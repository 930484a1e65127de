//! vLLM's budget: the KV memory left after weights, activations and non-torch memory,
//! `available KV = total × gpu_memory_utilization − weights − activation peak − non-torch`, paged
//! in blocks (`vllm_paging`), whether vLLM starts with that pool, and the lines vLLM logs, with
//! their derivations.

use super::helpers::{floor_div, gib_str, gib_sym};
use super::kv_profile::KvProfile;
use super::vllm_inputs::{check_vllm_inputs, user, VllmInputs};
use super::vllm_paging::{
    block_bytes_derivation, page_layout, tokens_and_concurrency, PageLayout, Paging, UnifiedKind,
};
use super::vllm_version::{CacheTokensRule, ConcurrencyRule, VllmLogRules, VllmVersion};
use crate::base::derivation::{group, Derivation, Source, Term};
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::Bytes;
use serde::{Deserialize, Serialize};

/// vLLM's KV budget and what it logs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VllmBudget {
    /// `total × gpu_memory_utilization`.
    pub requested_memory: Bytes,
    /// Memory left for the KV cache (0 when negative).
    pub available_kv: Bytes,
    /// Bytes of one block id across all layers that share it.
    pub bytes_per_block: Bytes,
    /// `num_gpu_blocks`.
    pub num_gpu_blocks: u64,
    /// "GPU KV cache size: N tokens".
    pub kv_cache_tokens: u64,
    /// "Maximum concurrency for L tokens per request: X×".
    pub max_concurrency: f64,
    /// Whether one request of `max_model_len` fits (vLLM refuses to start otherwise).
    pub fits_max_model_len: bool,
    /// Paging scheme used.
    pub paging: Paging,
    /// Tokens per block as vLLM runs it: the user's `block_size`, or the larger one vLLM sets
    /// for a model with recurrent layers ([`Paging::Mamba`]).
    pub block_size: u64,
    /// Layers per KV group (hybrid), else the number of attention layers.
    pub group_size: u64,
    /// Blocks one request of `max_model_len` needs.
    pub blocks_per_request: u64,
    /// Under the hybrid allocator with the layers' pages unified (sliding and full layers of
    /// different bytes per token, `vllm_paging`), each kind of layer with the tokens per block
    /// vLLM gives it; empty otherwise (every group's block is [`VllmBudget::block_size`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unified_kinds: Vec<UnifiedKind>,
    /// The vLLM release whose figures and lines these are (the one asked for, or the oldest
    /// the rules know for an older one: `vllm_version`).
    pub vllm_version: VllmVersion,
    /// The lines vLLM prints.
    pub log_lines: Vec<String>,
    /// Derivations: available KV, bytes per block, blocks, tokens, concurrency.
    pub derivations: Vec<Derivation>,
    /// Notes (translation keys).
    pub notes: Vec<String>,
}

/// What vLLM V1 does at start-up with a budget: its `check_enough_kv_cache_memory` refuses to
/// start when the pool does not hold one request of `max_model_len`
/// ([`VllmBudget::fits_max_model_len`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VllmStartup {
    /// The engine starts with `num_gpu_blocks` blocks.
    Starts {
        /// The pool, blocks.
        num_gpu_blocks: u64,
    },
    /// The engine refuses to start: the pool holds `num_gpu_blocks` blocks where one request
    /// of `max_model_len` needs `needed`.
    Refuses {
        /// The pool, blocks.
        num_gpu_blocks: u64,
        /// Blocks of one request of `max_model_len` (vLLM's minimum).
        needed: u64,
    },
}

impl VllmBudget {
    /// What vLLM V1 does at start-up with this budget ([`VllmStartup`]).
    pub fn startup(&self) -> VllmStartup {
        if self.fits_max_model_len {
            VllmStartup::Starts {
                num_gpu_blocks: self.num_gpu_blocks,
            }
        } else {
            VllmStartup::Refuses {
                num_gpu_blocks: self.num_gpu_blocks,
                needed: self.blocks_per_request,
            }
        }
    }

    /// The fewest blocks a server **known to have started** on these inputs can have had: the
    /// budget's, or vLLM's start-up minimum (one request of `max_model_len`) where the budget
    /// falls below it. A server that started passed `check_enough_kv_cache_memory`, so where
    /// this budget says it would have refused, the inputs differ from the deployment's (more
    /// memory, other flags) and the minimum is the smallest pool consistent with its having
    /// started: for a published benchmark that ran, not for a deployment being planned (there
    /// the refusal is the answer).
    pub fn blocks_if_started(&self) -> u64 {
        match self.startup() {
            VllmStartup::Starts { num_gpu_blocks } => num_gpu_blocks,
            VllmStartup::Refuses { needed, .. } => needed,
        }
    }
}

/// Formats an integer with thousands separators as Python's `f"{n:,}"`.
fn py_group(n: u64) -> String {
    group(n)
}

/// Memory left for the KV cache: the override when given, else `requested − W − A − N`
/// (0 when negative, with a note).
fn available_kv(inp: &VllmInputs, requested: Bytes, notes: &mut Vec<String>) -> Bytes {
    match inp.available_kv_override {
        Some(k) => k,
        None => {
            let need = inp.weights + inp.activation_peak + inp.non_torch;
            if need > requested {
                notes.push("note_vllm_no_memory".to_string());
            }
            requested - inp.weights - inp.activation_peak - inp.non_torch
        }
    }
}

/// The lines vLLM logs: available memory, blocks, cache tokens, concurrency (one line from
/// vLLM 0.27, `vllm_version`), and the refusal when one request of `max_model_len` does not
/// fit.
fn vllm_log_lines(
    l: u64,
    available: Bytes,
    counts: &BlockCounts,
    fits: bool,
    one_line: bool,
) -> Vec<String> {
    let (blocks, tokens, conc) = (counts.blocks, counts.tokens, counts.conc);
    let size = format!("GPU KV cache size: {} tokens", py_group(tokens));
    let concurrency = format!(
        "Maximum concurrency for {} tokens per request: {:.2}x",
        py_group(l),
        conc
    );
    let mut log_lines = vec![
        format!("Available KV cache memory: {:.2} GiB", available.gib()),
        format!("# GPU blocks: {blocks}"),
    ];
    if one_line {
        log_lines.push(format!("{size}, {concurrency}"));
    } else {
        log_lines.extend([size, concurrency]);
    }
    if !fits {
        log_lines.push(format!(
            "The model's max seq len ({l}) is larger than the maximum number of tokens that can be stored in KV cache ({tokens})."
        ));
    }
    log_lines
}

/// The lines vLLM logs when it sizes the attention block for recurrent layers: the block
/// size it sets (when the rule chose it) and the padding of the state to the page.
fn mamba_log_lines(layout: &PageLayout) -> Vec<String> {
    let mut out = Vec::new();
    if layout.paging != Paging::Mamba {
        return out;
    }
    let bs = layout.block_size;
    if layout.block_set {
        out.push(format!(
            "Setting attention block size to {bs} tokens to ensure that attention page size is >= mamba page size."
        ));
    }
    let page = layout.bytes_per_block.0 / layout.group_size.max(1);
    let state = layout.state_page.0;
    if state > 0 && page > state {
        let pct = 100.0 * (page - state) as f64 / state as f64;
        out.push(format!(
            "Padding mamba page size by {pct:.2}% to ensure that mamba page size and attention page size are exactly equal."
        ));
    }
    out
}

/// Blocks, cache tokens and concurrency, as vLLM reports them.
struct BlockCounts {
    blocks: u64,
    tokens: u64,
    conc: f64,
}

/// The derivation of the available KV memory: the override, or `M × u − W − A − N`.
fn available_derivation(inp: &VllmInputs, available: Bytes) -> Derivation {
    let (rhs, terms, notes) = match inp.available_kv_override {
        Some(k) => (
            gib_sym("K", k),
            vec![Term::new(
                "K",
                "term_available_kv",
                gib_str(k),
                "GiB",
                user("available_kv_gib"),
            )],
            vec![],
        ),
        None => (
            budget_expr(inp),
            budget_terms(inp),
            vec!["note_vllm_gib".into()],
        ),
    };
    Derivation {
        // The override is the available memory itself.
        result: format!("{:.2} GiB ({} B)", available.gib(), group(available.0)),
        terms,
        notes,
        ..Derivation::of("vllm_available_kv", &Expr::named("KV_avail", rhs))
    }
}

/// The memory left for the KV cache without an override: `M × u − W − A − N`, in GiB.
fn budget_expr(inp: &VllmInputs) -> Expr {
    let u = inp.gpu_memory_utilization;
    let requested = Expr::mul([
        gib_sym("M", inp.total_memory),
        Expr::sym("u", u.to_string(), u),
    ]);
    let less_weights = Expr::minus(requested, gib_sym("W", inp.weights));
    let less_activation = Expr::minus(less_weights, gib_sym("A", inp.activation_peak));
    Expr::minus(less_activation, gib_sym("N", inp.non_torch))
}

/// The terms of [`budget_expr`]: `M`, `u`, `W`, `A` and `N` with their sources.
fn budget_terms(inp: &VllmInputs) -> Vec<Term> {
    let gib = |symbol: &str, key: &str, b: Bytes, source: &Source| {
        Term::new(symbol, key, gib_str(b), "GiB", source.clone())
    };
    vec![
        gib(
            "M",
            "term_total_gpu_memory",
            inp.total_memory,
            &inp.total_source,
        ),
        Term::new(
            "u",
            "term_gpu_memory_utilization",
            inp.gpu_memory_utilization.to_string(),
            "",
            user("gpu_memory_utilization"),
        ),
        gib("W", "term_weights", inp.weights, &inp.weights_source),
        gib(
            "A",
            "term_activation_peak",
            inp.activation_peak,
            &inp.activation_source,
        ),
        gib("N", "term_non_torch", inp.non_torch, &inp.non_torch_source),
    ]
}

/// The derivations of the block count, the cache tokens and the maximum concurrency.
fn count_derivations(
    inp: &VllmInputs,
    layout: &PageLayout,
    available: Bytes,
    counts: &BlockCounts,
    rules: &VllmLogRules,
) -> [Derivation; 3] {
    [
        blocks_derivation(layout, available, counts.blocks),
        tokens_derivation(inp, layout, counts, rules),
        concurrency_derivation(inp, layout, counts, rules),
    ]
}

/// A count as a symbol shown with thousands separators (`1,952`).
fn count_sym(symbol: &str, n: u64) -> Expr {
    Expr::sym(symbol, group(n), n)
}

/// A count as a symbol shown as it is (`16`).
fn plain_sym(symbol: &str, n: u64) -> Expr {
    Expr::sym(symbol, n.to_string(), n)
}

/// The block count's derivation: `N_blocks = ⌊KV_avail / B_block⌋`.
fn blocks_derivation(layout: &PageLayout, available: Bytes, blocks: u64) -> Derivation {
    let bytes = |symbol: &str, b: Bytes| Expr::sym(symbol, format!("{} B", group(b.0)), b.0);
    let e = Expr::named(
        "N_blocks",
        Expr::floor(Expr::over(
            bytes("KV_avail", available),
            bytes("B_block", layout.bytes_per_block),
        )),
    );
    Derivation {
        result_key: "drv_n_blocks".into(),
        result: group(blocks),
        ..Derivation::of("vllm_num_gpu_blocks", &e)
    }
}

/// The cache tokens' derivation, by the release's rule (`vllm_version`): from vLLM 0.21
/// `⌊X × L⌋` for every layout; before, `⌊N_blocks / G⌋ × block_size` (`N_blocks × block_size`
/// with one group), with recurrent layers `⌊N_blocks / G⌋ × min(block_size, L)`.
fn tokens_derivation(
    inp: &VllmInputs,
    layout: &PageLayout,
    counts: &BlockCounts,
    rules: &VllmLogRules,
) -> Derivation {
    let (bs, l) = (layout.block_size, inp.max_model_len);
    let blocks = count_sym("N_blocks", counts.blocks);
    let rhs = match (layout.paging, rules.cache_tokens) {
        (Paging::None, _) => Expr::mul([blocks, plain_sym("block_size", bs)]),
        (_, CacheTokensRule::ConcurrencyTimesLength) => {
            let x = Expr::sym("X", format!("{:.4}", counts.conc), counts.conc);
            Expr::floor(Expr::mul([x, count_sym("L", l)]))
        }
        (Paging::Uniform, CacheTokensRule::BlocksPerGroup) => {
            Expr::mul([blocks, plain_sym("block_size", bs)])
        }
        (Paging::Mamba, CacheTokensRule::BlocksPerGroup) => {
            let span = Expr::Min(vec![plain_sym("block_size", bs), plain_sym("L", l)]);
            Expr::mul([
                Expr::floor(Expr::over(blocks, plain_sym("G", layout.kv_groups))),
                Expr::shown(span, bs.min(l).to_string()),
            ])
        }
        (Paging::Hybrid, CacheTokensRule::BlocksPerGroup) => Expr::mul([
            Expr::floor(Expr::over(blocks, plain_sym("G", layout.kv_groups))),
            plain_sym("block_size", bs),
        ]),
    };
    Derivation {
        result_key: "drv_n_tokens".into(),
        result: group(counts.tokens),
        ..Derivation::of("vllm_kv_cache_tokens", &Expr::named("N_tok", rhs))
    }
}

/// The maximum concurrency's derivation: `X = N_tok / L` for one group of full attention
/// before vLLM 0.9.1; else the blocks over the blocks one request holds in all groups,
/// `X = N_blocks / Σ_groups blocks_per_request` (`vllm_version`).
fn concurrency_derivation(
    inp: &VllmInputs,
    layout: &PageLayout,
    counts: &BlockCounts,
    rules: &VllmLogRules,
) -> Derivation {
    let l = inp.max_model_len;
    Derivation {
        result: format!("{:.2}×", counts.conc),
        terms: vec![Term::new(
            "L",
            "term_max_model_len",
            group(l),
            "unit_tokens",
            user("max_model_len"),
        )],
        ..Derivation::of(
            "vllm_max_concurrency",
            &Expr::named("X", concurrency_rhs(l, layout, counts, rules)),
        )
    }
}

/// The right-hand side of [`concurrency_derivation`].
fn concurrency_rhs(
    l: u64,
    layout: &PageLayout,
    counts: &BlockCounts,
    rules: &VllmLogRules,
) -> Expr {
    let bs = layout.block_size;
    let (ga, gs) = layout.groups;
    let per_request = |terms: Vec<Expr>| Expr::Sum {
        index: Some("groups".into()),
        pattern: Box::new(Expr::sym("blocks_per_request", "", 0)),
        terms,
    };
    let blocks = count_sym("N_blocks", counts.blocks);
    let attention = || Expr::ceil(Expr::over(count_sym("L", l), plain_sym("block_size", bs)));
    let state = if rules.state_blocks_per_request > 1 {
        Expr::mul([Expr::int(gs), Expr::int(rules.state_blocks_per_request)])
    } else {
        Expr::int(gs)
    };
    match (layout.paging, rules.concurrency) {
        (Paging::Mamba, _) if ga > 0 => {
            let terms = vec![Expr::mul([Expr::int(ga), attention()]), state];
            Expr::over(blocks, per_request(terms))
        }
        (Paging::Mamba, _) => Expr::over(
            blocks,
            Expr::shown(per_request(vec![Expr::int(gs)]), gs.to_string()),
        ),
        (Paging::Hybrid, _) => {
            let per = layout.blocks_per_request;
            let sum = Expr::shown(per_request(vec![Expr::int(per)]), group(per));
            Expr::over(blocks, sum)
        }
        (Paging::Uniform, ConcurrencyRule::BlocksOverRequest) => Expr::over(blocks, attention()),
        (Paging::Uniform | Paging::None, _) => {
            Expr::over(count_sym("N_tok", counts.tokens), count_sym("L", l))
        }
    }
}

/// vLLM's rule. Errors for a utilization outside (0, 1], a zero block size or a zero
/// `max_model_len`.
pub fn vllm_budget(inp: &VllmInputs, kv: &KvProfile) -> Result<VllmBudget, CalcError> {
    check_vllm_inputs(inp)?;
    let rules = inp.vllm_version.rules();
    let u = inp.gpu_memory_utilization;
    let l = inp.max_model_len;
    let requested = Bytes((inp.total_memory.0 as f64 * u) as u64);
    let mut notes = Vec::new();
    let available = available_kv(inp, requested, &mut notes);
    if inp.vllm_version.predates_rules() {
        notes.push("note_vllm_version_oldest".to_string());
    }

    // Paging.
    let layout = page_layout(inp, kv, rules.state_blocks_per_request, &mut notes);
    if kv.state_per_seq > Bytes::ZERO && kv.has_attention() && layout.paging != Paging::Mamba {
        // Recurrent state beside sliding-window layers: not paged here, only attention is.
        notes.push("note_vllm_state_not_paged".to_string());
    }
    let blocks = floor_div(available, layout.bytes_per_block);
    let (tokens, conc) = tokens_and_concurrency(inp, &layout, blocks, &rules);
    let counts = BlockCounts {
        blocks,
        tokens,
        conc,
    };
    let fits = layout.paging == Paging::None || blocks >= layout.blocks_per_request;
    let mut log_lines = mamba_log_lines(&layout);
    log_lines.extend(vllm_log_lines(l, available, &counts, fits, rules.one_line));

    let d_avail = available_derivation(inp, available);
    let d_block = block_bytes_derivation(kv, &layout);
    let [d_blocks, d_tokens, d_conc] = count_derivations(inp, &layout, available, &counts, &rules);
    Ok(VllmBudget {
        requested_memory: requested,
        available_kv: available,
        bytes_per_block: layout.bytes_per_block,
        num_gpu_blocks: blocks,
        kv_cache_tokens: tokens,
        max_concurrency: conc,
        fits_max_model_len: fits,
        paging: layout.paging,
        block_size: layout.block_size,
        group_size: layout.group_size,
        blocks_per_request: layout.blocks_per_request,
        unified_kinds: layout.unified,
        vllm_version: rules.version,
        log_lines,
        derivations: vec![d_avail, d_block, d_blocks, d_tokens, d_conc],
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::super::kv_profile::{KvLayer, KvLayerKind};
    use super::*;
    use crate::base::derivation::Source;
    use crate::base::units::{GIB, MIB};

    /// vLLM's inputs with the KV memory given outright, 16-token blocks, `max_model_len`
    /// 20,000: the tests change what they vary.
    fn inputs_with_kv(available: Bytes) -> VllmInputs {
        VllmInputs::with_available_kv(available, 20_000)
    }

    #[test]
    fn vllm_uniform_blocks_tokens_concurrency() {
        // Llama-3.1-8B: 32 layers × 8 KV heads × (128 + 128) × 2 B = 131,072 B/token;
        // one block = 16 × 131,072 = 2 MiB. 3.8125 GiB / 2 MiB = 1,952 blocks;
        // tokens = 1,952 × 16 = 31,232; concurrency at 20,000 = 1.5616.
        // Row 1 of `vllm_observations.csv` is a V0 log: its release's rules.
        let kv = KvProfile::uniform(32, Bytes(8 * 256 * 2));
        let inp = VllmInputs {
            vllm_version: VllmVersion::OLDEST,
            ..inputs_with_kv(Bytes(3 * GIB + 13 * GIB / 16))
        };
        let b = vllm_budget(&inp, &kv).expect("valid");
        assert_eq!(b.bytes_per_block, Bytes(2 * MIB));
        assert_eq!(b.num_gpu_blocks, 1952);
        assert_eq!(b.kv_cache_tokens, 1952 * 16);
        assert!((b.max_concurrency - 31_232.0 / 20_000.0).abs() < 1e-12);
        assert!(b
            .log_lines
            .contains(&"Maximum concurrency for 20,000 tokens per request: 1.56x".to_string()));
        assert!(b
            .log_lines
            .contains(&"GPU KV cache size: 31,232 tokens".to_string()));
    }

    /// A KV pool given outright derives as itself (`KV_avail = K`, the user's figure, no
    /// GiB note); without it, `M × u − W − A − N` with the GiB note. Both results show the
    /// budget's own `available_kv`.
    #[test]
    fn available_derivation_of_override_and_of_memory() {
        let kv = KvProfile::uniform(1, Bytes(1));
        let given = vllm_budget(&inputs_with_kv(Bytes(3 * GIB)), &kv).expect("valid");
        let mut inp = inputs_with_kv(Bytes::ZERO);
        (inp.available_kv_override, inp.total_memory) = (None, Bytes::from_gib(80));
        let derived = vllm_budget(&inp, &kv).expect("valid");
        for (b, formula, source, notes) in [
            (&given, "KV_avail = K", user("available_kv_gib"), 0),
            (
                &derived,
                "KV_avail = M × u − W − A − N",
                Source::User("total_memory".into()),
                1,
            ),
        ] {
            let d = &b.derivations[0];
            assert_eq!(d.title_key, "vllm_available_kv");
            assert_eq!(d.formula, formula);
            assert_eq!(d.terms[0].source, source);
            assert_eq!(d.notes.len(), notes);
            let gib = format!("{:.2} GiB", b.available_kv.gib());
            assert!(d.result.starts_with(&gib), "{} vs {gib}", d.result);
        }
        assert_eq!(given.available_kv, Bytes(3 * GIB));
    }

    /// vLLM starts when one request of `max_model_len` fits, else refuses; a server known to
    /// have started had at least that request's blocks.
    #[test]
    fn startup_refuses_below_one_request_and_the_floor_is_that_request() {
        // 2 MiB blocks (as above); 20,000 tokens need ⌈20,000 / 16⌉ = 1,250 blocks.
        let kv = KvProfile::uniform(32, Bytes(8 * 256 * 2));
        let budget_of = |blocks: u64| {
            vllm_budget(&inputs_with_kv(Bytes(blocks * 2 * MIB)), &kv).expect("valid")
        };
        for (blocks, starts) in [(1249, false), (1250, true), (3000, true)] {
            let b = budget_of(blocks);
            assert_eq!(b.num_gpu_blocks, blocks);
            let want = if starts {
                VllmStartup::Starts {
                    num_gpu_blocks: blocks,
                }
            } else {
                VllmStartup::Refuses {
                    num_gpu_blocks: blocks,
                    needed: 1250,
                }
            };
            assert_eq!(b.startup(), want, "{blocks} blocks");
            assert_eq!(b.blocks_if_started(), blocks.max(1250), "{blocks} blocks");
        }
    }

    #[test]
    fn vllm_hybrid_sliding_groups() {
        // 12 full + 12 sliding (window 128) layers of 2,048 B/token (gpt-oss-20b shape):
        // group size 12, page = 16 × 2,048 = 32 KiB, block id = 12 pages = 384 KiB.
        // Per request at L = 8,192 with 2,048 batched tokens: full ⌈8192/16⌉ = 512 blocks,
        // sliding ⌈min(127 + 2048, 8192)/16⌉ + 1 = 136 + 1 = 137; total 649.
        let mut kv = KvProfile::default();
        for i in 0..24 {
            kv.layers.push(KvLayer {
                kind: if i % 2 == 0 {
                    KvLayerKind::Sliding { window: 128 }
                } else {
                    KvLayerKind::Full
                },
                bytes_per_token: Bytes(2048),
            });
        }
        let inp = VllmInputs {
            max_model_len: 8192,
            ..inputs_with_kv(Bytes::from_gib(10))
        };
        let b = vllm_budget(&inp, &kv).expect("valid");
        assert_eq!(b.paging, Paging::Hybrid);
        assert_eq!(b.group_size, 12);
        assert_eq!(b.bytes_per_block, Bytes(12 * 16 * 2048));
        assert_eq!(b.num_gpu_blocks, 10 * GIB / (12 * 16 * 2048));
        assert_eq!(b.blocks_per_request, 512 + 137);
    }

    /// The note of a release older than the rules names the release they then follow.
    #[test]
    fn the_oldest_release_note_names_it() {
        use crate::base::i18n::{tr, Lang};
        let kv = KvProfile::uniform(1, Bytes(1));
        let inp = VllmInputs {
            vllm_version: VllmVersion::new(0, 5, 0),
            ..inputs_with_kv(Bytes(GIB))
        };
        let b = vllm_budget(&inp, &kv).expect("valid");
        assert_eq!(b.vllm_version, VllmVersion::OLDEST);
        assert!(b.notes.iter().any(|n| n == "note_vllm_version_oldest"));
        let oldest = VllmVersion::OLDEST.to_string();
        for lang in [Lang::En, Lang::Ko] {
            assert!(tr(lang, "note_vllm_version_oldest").contains(&oldest));
        }
        let known = vllm_budget(&inputs_with_kv(Bytes(GIB)), &kv).expect("valid");
        assert!(known.notes.iter().all(|n| n != "note_vllm_version_oldest"));
        assert_eq!(known.vllm_version, VllmVersion::DEFAULT);
    }

    #[test]
    fn bad_utilization_is_an_error() {
        let kv = KvProfile::uniform(1, Bytes(1));
        for u in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
            let inp = VllmInputs {
                total_memory: Bytes(1),
                gpu_memory_utilization: u,
                available_kv_override: None,
                max_model_len: 1,
                max_num_batched_tokens: 1,
                ..inputs_with_kv(Bytes::ZERO)
            };
            assert!(vllm_budget(&inp, &kv).is_err());
        }
    }
}
