//! KV cache and recurrent state bytes, per token, per sequence and per batch, by layer type.
//!
//! Per layer and token (elements, per GPU under tensor parallelism `t`):
//! * full or sliding attention: `(d_k + d_v) × H_kv'` with `H_kv' = max(1, H_kv / t)`
//!   (K and V; `d_k = d_v` = head_dim for most models, so `2 × H_kv × d_head`);
//! * MLA (DeepSeek-V2/V3): one latent `r_kv + d_rope` per token, no ×2 for K and V, replicated
//!   on every GPU;
//! * DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5), in every MLA layer that runs
//!   one: its key, `d_idx = d_i + ⌊d_i / 128⌋ × 4` bytes per token whatever the KV precision
//!   (fp8 values and an fp32 scale per 128 of them, [`crate::model::MlaIndexer`]), replicated
//!   on every GPU. vLLM gives each indexer its own cache layer (`DeepseekV32IndexerCache`, an
//!   `MLAAttentionSpec` of one head of `d_idx` uint8) and, as all these layers keep every
//!   token, puts them and the MLA layers in one KV cache group whose page is the sum of every
//!   layer's page (`UniformTypeKVCacheSpecs`, `vllm/v1/core/kv_cache_utils.py`
//!   `get_kv_cache_config_from_groups`: `num_blocks = available_memory // page_size_bytes`), so
//!   a block costs `block_size × (Σ latent bytes + Σ indexer bytes)`, as it is summed here;
//! * SSM / linear layers: nothing per token; a constant state per sequence instead
//!   ([`state_bytes`]).
//!
//! A sequence of `T` tokens caches `min(T, W)` tokens in a sliding-window layer of window `W`
//! (vLLM's sliding-window manager frees blocks outside the window; block rounding is left to
//! the memory planner). Bytes are `⌈Σ elements × tokens × bits / 8⌉`; fp8/int8/fp4 KV scales
//! are not counted.
//!
//! These figures are the model's, on no particular GPU. With an fp8 KV cache, vLLM stores a
//! sparse-attention MLA model's latents on Hopper in FlashMLA's `fp8_ds_mla` layout (656 B per
//! layer and token for 512 + 64 instead of 576) and on Blackwell in the plain fp8 counted here
//! ([`uses_fp8_ds_mla`]); the per-GPU profile that pages vLLM's blocks applies it
//! (`memory::KvProfile::from_model`, which takes the GPU's architecture).
//!
//! With the MTP modules loaded for speculative decoding ([`ModelDesc::load_mtp`]) their decoder
//! layers are cached too ([`ModelDesc::kv_layers`]): vLLM's drafter registers its attention
//! layers beside the target's and the KV cache config gives them blocks like any other layer
//! (`vllm/v1/spec_decode/eagle.py`, `EagleProposer.load_model`: `draft_attn_layer_names`, and
//! `validate_same_kv_cache_group`; `DeepSeekMTP` and `Qwen3NextMTP` build
//! `num_nextn_predict_layers` layers, each with its own attention).
//!
//! The recurrent state is kept in the model's own precision (`torch_dtype`), as vLLM
//! (`mamba_ssm_cache_dtype = auto`) and Hugging Face do by default; pass `Dtype::Fp32` to
//! [`state_bytes`] for engines that keep it in fp32. Where the config names the SSM state's
//! precision ([`ModelDesc::ssm_state_dtype`]: Qwen3.5's `mamba_ssm_dtype`, Nemotron-H's
//! `mamba_ssm_cache_dtype`, both `float32` in the published configs), that part is kept in it
//! and the conv state in the model's, as vLLM does for those families.

use crate::base::checked::{add, bits_to_bytes, mul};
use crate::base::derivation::{binary_bytes_text, group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::expr::{Expr, Value};
use crate::base::units::{fmt_sig, Bytes};
use crate::calc::tp::state_elems_per_gpu;
use crate::hardware::Architecture;
use crate::model::{Mixer, ModelDesc};

/// A byte count with its derivation.
#[derive(Debug, Clone, PartialEq)]
pub struct KvBytes {
    /// The bytes.
    pub bytes: Bytes,
    /// Formula, substituted values and result.
    pub derivation: Derivation,
}

/// KV heads held by one GPU under tensor parallelism `tp`: `max(1, kv_heads / tp)` (heads
/// are replicated when `tp` exceeds them).
pub fn kv_heads_per_rank(kv_heads: u64, tp: u64) -> u64 {
    (kv_heads / tp.max(1)).max(1)
}

/// The KV precision used when the user chooses none: the checkpoint's `torch_dtype`
/// (vLLM's `kv_cache_dtype = auto`); bf16 when the weights are stored below 16 bits.
pub fn default_kv_dtype(m: &ModelDesc) -> Dtype {
    auto_kv_dtype(m.weights.base)
}

/// vLLM's `kv_cache_dtype = auto` for a checkpoint whose unquantized tensors are `base`: the
/// base precision itself, bf16 when it is below 16 bits (the precision of the unquantized
/// tensors, [`crate::calc::weights::unquantized_dtype`]). The one rule behind every
/// default KV precision.
pub fn auto_kv_dtype(base: Dtype) -> Dtype {
    crate::calc::weights::unquantized_dtype(base)
}

/// Bytes one layer caches per token beside its elements, whatever the KV precision and on every
/// GPU: the sparse-attention indexer's key of an MLA layer that runs one
/// ([`crate::model::MlaIndexer::cache_bytes_per_token`]); 0 for every other layer.
pub fn layer_fixed_bytes_per_token(mixer: &Mixer) -> u64 {
    match mixer {
        Mixer::Mla {
            indexer: Some(ix), ..
        } => ix.cache_bytes_per_token(),
        _ => 0,
    }
}

/// Elements of the NoPE latent that share one fp32 scale in vLLM's `fp8_ds_mla` cache.
pub const FP8_DS_MLA_SCALE_BLOCK: u64 = 128;

/// Whether the model attends sparsely through MLA: one of its cached layers is an MLA layer
/// running a sparse-attention indexer (DeepSeek-V3.2, GLM-5; vLLM's `index_topk`), so vLLM
/// serves it with a sparse MLA backend only.
pub fn is_sparse_mla(m: &ModelDesc) -> bool {
    m.kv_layers().any(|l| {
        matches!(
            l.mixer,
            Mixer::Mla {
                indexer: Some(_),
                ..
            }
        )
    })
}

/// Whether vLLM stores this model's MLA latents in its `fp8_ds_mla` format at KV precision
/// `kv` on a GPU of architecture `arch`: a sparse-attention MLA model ([`is_sparse_mla`]) with
/// an fp8 KV cache on Hopper. There vLLM's sparse MLA backend is FlashMLA's
/// (`FLASHMLA_SPARSE`, `vllm/v1/attention/backends/mla/flashmla_sparse.py`), and
/// `MLAAttention.__init__` (`vllm/model_executor/layers/attention/mla_attention.py`) turns a
/// quantized `kv_cache_dtype` into `fp8_ds_mla` for the engine, so every MLA layer uses it,
/// whether or not it runs its own indexer. On Blackwell vLLM prefers FlashInfer's sparse MLA
/// backend with an fp8 cache (vLLM PR #37252, in 0.19), which keeps the plain latent at one
/// byte per element; no other architecture runs a sparse MLA backend, and an unknown one
/// ([`Architecture::Unknown`], the model-level figure) keeps the plain latent too.
pub fn uses_fp8_ds_mla(m: &ModelDesc, kv: Dtype, arch: Architecture) -> bool {
    kv == Dtype::Fp8 && arch == Architecture::Hopper && is_sparse_mla(m)
}

/// Bytes one MLA latent of `kv_lora_rank + qk_rope_head_dim` takes in vLLM's `fp8_ds_mla`
/// layout: the NoPE latent in fp8 (1 B each), one fp32 scale per [`FP8_DS_MLA_SCALE_BLOCK`]
/// of it, the RoPE part kept in bf16 (2 B each): `r_kv + ⌈r_kv / 128⌉ × 4 + d_rope × 2`, 656 B
/// for DeepSeek-V3.2's and GLM-5's 512 + 64 (`flashmla_sparse.py` module notes;
/// `MLAAttentionSpec.real_page_size_bytes`, `vllm/v1/kv_cache_interface.py`).
pub fn fp8_ds_mla_bytes_per_token(kv_lora_rank: u64, qk_rope_head_dim: u64) -> u64 {
    let scales = kv_lora_rank
        .div_ceil(FP8_DS_MLA_SCALE_BLOCK)
        .saturating_mul(4);
    kv_lora_rank
        .saturating_add(scales)
        .saturating_add(qk_rope_head_dim.saturating_mul(2))
}

/// Bytes the `fp8_ds_mla` layout adds per token to one layer beyond its latent's elements at
/// one fp8 byte each (its scales and the RoPE part's second byte), when the model uses the
/// layout (`ds_mla`: [`uses_fp8_ds_mla`], decided once per model); 0 otherwise and for every
/// non-MLA layer.
pub fn layer_ds_mla_extra_bytes(mixer: &Mixer, ds_mla: bool) -> u64 {
    match *mixer {
        Mixer::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            ..
        } if ds_mla => fp8_ds_mla_bytes_per_token(kv_lora_rank, qk_rope_head_dim)
            .saturating_sub(kv_lora_rank.saturating_add(qk_rope_head_dim)),
        _ => 0,
    }
}

/// Elements cached per token by one layer on one GPU (0 for SSM layers).
pub fn layer_elems_per_token(mixer: &Mixer, tp: u64) -> Result<u64, CalcError> {
    Ok(match mixer {
        Mixer::Attention {
            kv_heads,
            head_dim,
            v_head_dim,
            ..
        } => mul(
            "ovf_kv_elements",
            &[
                add("ovf_kv_elements", &[*head_dim, *v_head_dim])?,
                kv_heads_per_rank(*kv_heads, tp),
            ],
        )?,
        Mixer::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            ..
        } => add("ovf_kv_elements", &[*kv_lora_rank, *qk_rope_head_dim])?,
        Mixer::Ssm { .. } => 0,
    })
}

/// How a group's layers write their elements per token.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// K and V of one head size: `2 × H_kv × d_head`.
    Mha,
    /// K and V of different head sizes: `(d_k + d_v) × H_kv`.
    Split,
    /// One latent: `(r_kv + d_rope)`.
    Mla,
}

/// Layers grouped by (elements per token, window, how the elements are written).
struct Group {
    count: u64,
    elems: u64,
    window: Option<u64>,
    /// One layer's elements per token on one GPU, in values.
    per_layer: Expr,
    kind: Kind,
}

fn groups(m: &ModelDesc, tp: u64) -> Result<Vec<Group>, CalcError> {
    let mut out: Vec<Group> = Vec::new();
    for l in m.kv_layers() {
        let (per_layer, kind, window) = match &l.mixer {
            Mixer::Attention {
                kv_heads,
                head_dim,
                v_head_dim,
                window,
                ..
            } => {
                let h = Expr::int(kv_heads_per_rank(*kv_heads, tp));
                let (d, dv) = (Expr::int(*head_dim), Expr::int(*v_head_dim));
                if head_dim == v_head_dim {
                    (Expr::mul([Expr::int(2), h, d]), Kind::Mha, *window)
                } else {
                    (Expr::mul([Expr::add([d, dv]), h]), Kind::Split, *window)
                }
            }
            Mixer::Mla {
                kv_lora_rank,
                qk_rope_head_dim,
                ..
            } => {
                let latent = [Expr::int(*kv_lora_rank), Expr::int(*qk_rope_head_dim)];
                (Expr::add(latent), Kind::Mla, None)
            }
            Mixer::Ssm { .. } => continue,
        };
        let elems = layer_elems_per_token(&l.mixer, tp)?;
        match out
            .iter_mut()
            .find(|g| g.elems == elems && g.window == window && g.per_layer == per_layer)
        {
            Some(g) => g.count += 1,
            None => out.push(Group {
                count: 1,
                elems,
                window,
                per_layer,
                kind,
            }),
        }
    }
    Ok(out)
}

/// The sparse-attention indexers of the cached layers, grouped by their bytes per token:
/// `(layers, bytes per token)` ([`layer_fixed_bytes_per_token`]).
fn indexer_groups(m: &ModelDesc) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for l in m.kv_layers() {
        let bytes = layer_fixed_bytes_per_token(&l.mixer);
        if bytes == 0 {
            continue;
        }
        match out.iter_mut().find(|g| g.1 == bytes) {
            Some(g) => g.0 += 1,
            None => out.push((1, bytes)),
        }
    }
    out
}

/// The indexers' bytes as one expression, `L_idx × d_idx (× T) (× B)` (every token kept: an
/// indexer attends to the whole sequence); `None` without indexers.
fn indexer_expression(ix: &[(u64, u64)], tokens: Option<u64>, batch: u64) -> Option<Expr> {
    if ix.is_empty() {
        return None;
    }
    let mut pattern = vec![symbol("L_idx"), symbol("d_idx")];
    pattern.extend(tokens.map(|_| symbol("T")));
    let terms = ix
        .iter()
        .map(|&(count, bytes)| {
            let mut xs = vec![Expr::int(count), Expr::int(bytes)];
            xs.extend(tokens.map(Expr::int));
            Expr::mul(xs)
        })
        .collect();
    let mut xs = vec![Expr::Sum {
        index: None,
        pattern: Box::new(Expr::mul(pattern)),
        terms,
    }];
    if batch > 1 {
        xs.push(Expr::sym("B", batch.to_string(), batch));
    }
    Some(Expr::mul(xs))
}

/// A symbol of the formula line only (a group's values stand for it).
fn symbol(s: &str) -> Expr {
    Expr::sym(s, "", 0)
}

/// One term of the sum in symbols, `T` (tokens) included when `tokens`: MLA's latent, MHA's
/// `2 × L × H_kv × d_head`, or, for a mix, `Σ_layers (d_k + d_v) × H_kv`.
fn pattern(gs: &[Group], tokens: bool) -> (Option<String>, Expr) {
    let mla = !gs.is_empty() && gs.iter().all(|g| g.kind == Kind::Mla);
    let mha = gs.iter().all(|g| g.kind == Kind::Mha);
    let (index, mut xs) = match (mla, mha) {
        (true, _) => {
            let latent = Expr::add([symbol("r_kv"), symbol("d_rope")]);
            (None, vec![symbol("L"), latent])
        }
        (_, true) => (
            None,
            vec![Expr::int(2), symbol("L"), symbol("H_kv"), symbol("d_head")],
        ),
        _ => {
            let kv = Expr::add([symbol("d_k"), symbol("d_v")]);
            (Some("layers".to_string()), vec![kv, symbol("H_kv")])
        }
    };
    if tokens {
        xs.push(symbol("T"));
    }
    (index, Expr::mul(xs))
}

/// The bytes as one expression: `(Σ_groups count × elems × tokens(group)) × B × b`, and
/// whether a window capped a group's tokens.
fn expression(gs: &[Group], kv: Dtype, tokens: Option<u64>, batch: u64) -> (Expr, bool) {
    let mut windowed = false;
    let terms: Vec<Expr> = gs
        .iter()
        .map(|g| {
            let mut xs = vec![Expr::int(g.count), g.per_layer.clone()];
            if let Some(t) = tokens {
                let t = match g.window {
                    Some(w) => {
                        windowed |= w < t;
                        t.min(w)
                    }
                    None => t,
                };
                xs.push(Expr::int(t));
            }
            Expr::mul(xs)
        })
        .collect();
    let (index, pattern) = pattern(gs, tokens.is_some());
    let mut tail = Vec::new();
    if batch > 1 {
        tail.push(Expr::sym("B", batch.to_string(), batch));
    }
    let bits = kv.bits();
    tail.push(Expr::sym(
        "b",
        fmt_sig(bits as f64 / 8.0),
        Value::Exact(bits, 8),
    ));
    let per_bytes = |sum: Expr| Expr::mul(std::iter::once(sum).chain(tail.iter().cloned()));
    let e = if terms.is_empty() {
        Expr::Zero {
            formula: Box::new(per_bytes(pattern)),
            because: "L_attn = 0".into(),
        }
    } else {
        per_bytes(Expr::Sum {
            index,
            pattern: Box::new(pattern),
            terms,
        })
    };
    (e, windowed)
}

/// Core: `⌈Σ_groups count × elems × tokens(group) × bits / 8⌉` with a derivation.
fn compute(
    m: &ModelDesc,
    kv: Dtype,
    tp: u64,
    tokens: Option<u64>,
    batch: u64,
    title: &str,
) -> Result<KvBytes, CalcError> {
    crate::calc::tp::check_model(m, tp)?;
    let gs = groups(m, tp)?;
    let ix = indexer_groups(m);
    let (e, windowed) = expression(&gs, kv, tokens, batch);
    let e = match indexer_expression(&ix, tokens, batch) {
        Some(i) => Expr::add([e, i]),
        None => e,
    };
    let bytes = e.exact("ovf_kv_bytes")?.ceil();
    Ok(KvBytes {
        bytes: Bytes(bytes),
        derivation: Derivation {
            result: binary_bytes_text(Bytes(bytes)),
            terms: terms(m, (&gs, &ix), kv, tp, tokens, batch),
            notes: notes(m, (&gs, &ix), kv, tp, windowed),
            ..Derivation::of(title, &e)
        },
    })
}

/// The inputs of [`compute`]'s derivation: `L`, `b`, the indexers' `L_idx` and `d_idx` when
/// there are any, then `T`, `B` and `t` where they count.
fn terms(
    m: &ModelDesc,
    (gs, ix): (&[Group], &[(u64, u64)]),
    kv: Dtype,
    tp: u64,
    tokens: Option<u64>,
    batch: u64,
) -> Vec<Term> {
    let b_text = fmt_sig(kv.bits() as f64 / 8.0);
    let layers: u64 = gs.iter().map(|g| g.count).sum();
    // A translation key when MTP layers are in (the UI translates a source that is a key).
    let layers_source = if m.kv_mtp_layers() > 0 {
        "src_attention_layers_with_mtp"
    } else {
        "src_attention_layers"
    };
    let mut terms = vec![
        Term::new(
            "L",
            "term_layers",
            layers.to_string(),
            "",
            Source::Derived(layers_source.into()),
        ),
        Term::new(
            "b",
            "term_kv_bytes",
            b_text,
            "B",
            Source::User(format!("kv_dtype = {kv}")),
        ),
    ];
    if let Some(&(_, bytes)) = ix.first() {
        let layers: u64 = ix.iter().map(|g| g.0).sum();
        let derived = |k: &str| Source::Derived(k.into());
        terms.push(Term::new(
            "L_idx",
            "term_indexer_layers",
            layers.to_string(),
            "",
            derived("src_indexer_layers"),
        ));
        terms.push(Term::new(
            "d_idx",
            "term_indexer_bytes",
            bytes.to_string(),
            "B",
            derived("src_indexer_bytes"),
        ));
    }
    let user = |symbol: &str, key: &str, n: u64, unit: &str, field: &str| {
        Term::new(symbol, key, n.to_string(), unit, Source::User(field.into()))
    };
    terms.extend(tokens.map(|t| user("T", "term_tokens", t, "unit_tokens", "context")));
    if batch > 1 {
        terms.push(user("B", "term_batch", batch, "", "batch"));
    }
    if tp > 1 {
        terms.push(user("t", "term_tp", tp, "", "tp"));
    }
    terms
}

/// The notes of [`compute`]'s derivation.
fn notes(
    m: &ModelDesc,
    (gs, ix): (&[Group], &[(u64, u64)]),
    kv: Dtype,
    tp: u64,
    windowed: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    if windowed {
        notes.push("note_kv_window_cap".to_string());
    }
    if gs.iter().any(|g| g.kind == Kind::Mla) {
        notes.push("note_mla_no_x2".to_string());
    }
    if !ix.is_empty() {
        notes.push("note_kv_indexer".to_string());
    }
    // The figure keeps the plain fp8 latent; vLLM's layout depends on the GPU
    // ([`uses_fp8_ds_mla`]), which the blocks and concurrency per GPU apply.
    if kv == Dtype::Fp8 && is_sparse_mla(m) {
        notes.push("note_kv_fp8_ds_mla".to_string());
    }
    if tp > 1 {
        notes.push("note_kv_heads_per_rank".to_string());
    }
    if m.kv_mtp_layers() > 0 {
        notes.push("note_kv_mtp_layers".to_string());
    }
    notes
}

/// KV bytes per token over all attention layers (full-attention equivalent: windows not
/// applied), on one GPU under tensor parallelism `tp`.
pub fn per_token(m: &ModelDesc, kv: Dtype, tp: u64) -> Result<KvBytes, CalcError> {
    compute(m, kv, tp, None, 1, "kv_per_token")
}

/// KV bytes of one sequence of `tokens` tokens (sliding-window layers capped at the window).
pub fn per_sequence(m: &ModelDesc, kv: Dtype, tp: u64, tokens: u64) -> Result<KvBytes, CalcError> {
    compute(m, kv, tp, Some(tokens), 1, "kv_per_sequence")
}

/// KV bytes of `batch` sequences of `tokens` tokens each.
pub fn per_batch(
    m: &ModelDesc,
    kv: Dtype,
    tp: u64,
    tokens: u64,
    batch: u64,
) -> Result<KvBytes, CalcError> {
    compute(m, kv, tp, Some(tokens), batch.max(1), "kv_per_batch")
}

/// Recurrent state bytes of one sequence (SSM / linear layers), in precision `d`, per GPU
/// under tensor parallelism `tp` (state channels split `tp` ways, rounded up); 0 for pure
/// attention models. Where the config names the recurrent state's precision
/// ([`ModelDesc::ssm_state_dtype`], vLLM's `mamba_ssm_cache_dtype`), that part is kept in it
/// and the conv state in `d`, as vLLM's `MambaSpec` pages the two (`mamba_utils.py`,
/// `_mamba_state_dtype`).
pub fn state_bytes(m: &ModelDesc, d: Dtype, tp: u64) -> Result<KvBytes, CalcError> {
    if tp == 0 {
        return Err(CalcError::range_error(
            Phrase::verbatim("tp"),
            0,
            Phrase::tr("rng_at_least_1"),
        ));
    }
    let t = state_totals(m, tp)?;
    let ssm = split_dtype(m, d);
    let mut notes = vec![if ssm.is_some() {
        "note_state_dtype_split".to_string()
    } else {
        "note_state_dtype".to_string()
    }];
    if t.padded {
        notes.push("note_mamba_groups_padded".into());
    }
    let (bytes, derivation) = match ssm {
        None => whole_state(&t, d)?,
        Some((sd, key)) => split_state(&t, d, sd, key)?,
    };
    Ok(KvBytes {
        bytes: Bytes(bytes),
        derivation: Derivation {
            result: binary_bytes_text(Bytes(bytes)),
            notes,
            ..derivation
        },
    })
}

/// The terms every state derivation starts with: the recurrent layers `L_ssm` and the bytes
/// per element `b` of precision `d`.
fn state_terms(t: &StateTotals, d: Dtype) -> [Term; 2] {
    [
        Term::new(
            "L_ssm",
            "term_layers",
            t.layers.to_string(),
            "",
            Source::Derived("src_ssm_layers".into()),
        ),
        Term::new(
            "b",
            "term_kv_bytes",
            fmt_sig(d.bytes()),
            "B",
            Source::Default("state_dtype_model".into()),
        ),
    ]
}

/// Bytes per element of precision `d` as the symbol `symbol` (`b`, `b_r`).
fn bytes_sym(symbol: &str, d: Dtype) -> Expr {
    Expr::sym(symbol, fmt_sig(d.bytes()), Value::Exact(d.bits(), 8))
}

/// The bytes and the derivation, without result and notes, of a state kept whole in `d`:
/// `L_ssm × S × b` (the elements in all where the layers differ).
fn whole_state(t: &StateTotals, d: Dtype) -> Result<(u64, Derivation), CalcError> {
    let bytes = bits_to_bytes("ovf_state_bytes", t.elems, d.bits())?;
    let elems = Expr::mul([
        Expr::sym("L_ssm", t.layers.to_string(), t.layers),
        Expr::sym("S", group(t.first.1), t.first.1),
    ]);
    let elems = if t.uniform {
        elems
    } else {
        Expr::shown(elems, group(t.elems))
    };
    let e = Expr::mul([elems, bytes_sym("b", d)]);
    let [layers, b] = state_terms(t, d);
    let s = Term::new(
        "S",
        "term_state_elems",
        group(t.first.0),
        "",
        Source::Derived("src_ssm_state_per_layer".into()),
    );
    let terms = vec![layers, s, b];
    Ok((
        bytes,
        Derivation {
            terms,
            ..Derivation::of("state_bytes", &e)
        },
    ))
}

/// The recurrent layers' state on one of `tp` GPUs: their count, the elements in all and the
/// recurrent (SSM) part of those, the first layer's (whole, on one GPU, recurrent on one GPU),
/// whether every layer has the same whole and per-GPU state (`uniform`) and the same recurrent
/// part too (`uniform_split`), and whether vLLM pads the groups.
struct StateTotals {
    layers: u64,
    elems: u64,
    recurrent: u64,
    first: (u64, u64, u64),
    uniform: bool,
    uniform_split: bool,
    padded: bool,
}

fn state_totals(m: &ModelDesc, tp: u64) -> Result<StateTotals, CalcError> {
    let (mut layers, mut elems, mut recurrent, mut padded) = (0u64, 0u64, 0u64, false);
    let mut per: Vec<(u64, u64, u64)> = Vec::new();
    for mixer in ssm_mixers(m) {
        let on_gpu = state_elems_per_gpu(mixer, tp);
        let whole = whole_state_elems(mixer);
        padded |= on_gpu != whole.div_ceil(tp);
        elems = add("ovf_state_elements", &[elems, on_gpu])?;
        let rec = recurrent_per_gpu(mixer, tp);
        recurrent = add("ovf_state_elements", &[recurrent, rec])?;
        layers += 1;
        if !per.contains(&(whole, on_gpu, rec)) {
            per.push((whole, on_gpu, rec));
        }
    }
    let first = per.first().copied().unwrap_or((0, 0, 0));
    Ok(StateTotals {
        layers,
        elems,
        recurrent,
        first,
        uniform: !per.is_empty() && per.iter().all(|p| (p.0, p.1) == (first.0, first.1)),
        uniform_split: per.len() == 1,
        padded,
    })
}

/// The bytes and the derivation, without result and notes, of a state whose recurrent part
/// is kept in `sd` (named by the config key `key`) and its conv part in `d`:
/// `L_ssm × (S_c × b + S_r × b_r)` (the conv and recurrent elements in all where the layers
/// differ).
fn split_state(
    t: &StateTotals,
    d: Dtype,
    sd: Dtype,
    key: String,
) -> Result<(u64, Derivation), CalcError> {
    let conv = t.elems - t.recurrent;
    let bytes = add(
        "ovf_state_bytes",
        &[
            bits_to_bytes("ovf_state_bytes", conv, d.bits())?,
            bits_to_bytes("ovf_state_bytes", t.recurrent, sd.bits())?,
        ],
    )?;
    let (_, on_gpu, rec) = t.first;
    let e = Expr::mul([
        Expr::sym("L_ssm", t.layers.to_string(), t.layers),
        Expr::add([
            Expr::mul([
                Expr::sym("S_c", group(on_gpu - rec), on_gpu - rec),
                bytes_sym("b", d),
            ]),
            Expr::mul([Expr::sym("S_r", group(rec), rec), bytes_sym("b_r", sd)]),
        ]),
    ]);
    let substituted = if t.uniform_split {
        e.values()
    } else {
        format!(
            "{} × {} + {} × {}",
            group(conv),
            fmt_sig(d.bytes()),
            group(t.recurrent),
            fmt_sig(sd.bytes())
        )
    };
    let terms = split_state_terms(t, d, sd, key);
    Ok((
        bytes,
        Derivation {
            substituted,
            terms,
            ..Derivation::of("state_bytes", &e)
        },
    ))
}

/// The terms of [`split_state`]'s derivation: `L_ssm`, `S_c`, `S_r`, `b` and `b_r`.
fn split_state_terms(t: &StateTotals, d: Dtype, sd: Dtype, key: String) -> Vec<Term> {
    let (_, on_gpu, rec) = t.first;
    let [layers, b] = state_terms(t, d);
    vec![
        layers,
        Term::new(
            "S_c",
            "term_conv_state_elems",
            group(on_gpu - rec),
            "",
            Source::Derived("src_conv_state_per_layer".into()),
        ),
        Term::new(
            "S_r",
            "term_recurrent_state_elems",
            group(rec),
            "",
            Source::Derived("src_recurrent_state_per_layer".into()),
        ),
        b,
        Term::new(
            "b_r",
            "term_recurrent_state_bytes",
            fmt_sig(sd.bytes()),
            "B",
            Source::ConfigKey(key),
        ),
    ]
}

/// The recurrent state's own precision and the config key that names it, when it differs
/// from `d` ([`ModelDesc::ssm_state_dtype`]).
fn split_dtype(m: &ModelDesc, d: Dtype) -> Option<(Dtype, String)> {
    let sd = m.ssm_state_dtype.filter(|sd| *sd != d)?;
    let key = m
        .ledger
        .iter()
        .find(|e| e.field == "ssm_state_dtype")
        .and_then(|e| match &e.source {
            crate::model::desc::LedgerSource::Key(k) => Some(k.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "mamba_ssm_cache_dtype".into());
    Some((sd, key))
}

/// A mixer's recurrent state elements on one of `tp` GPUs (its heads split `tp` ways, rounded
/// up), at most its whole state there.
fn recurrent_per_gpu(mixer: &Mixer, tp: u64) -> u64 {
    mixer
        .recurrent_state_elems()
        .div_ceil(tp.max(1))
        .min(state_elems_per_gpu(mixer, tp))
}

/// The recurrent state of each SSM / linear-attention layer, in model order, per sequence
/// on one of `tp` GPUs at precision `d` (the recurrent part in the config's precision where
/// it names one: the terms [`state_bytes`] sums).
pub fn state_bytes_per_layer(m: &ModelDesc, d: Dtype, tp: u64) -> Result<Vec<Bytes>, CalcError> {
    let ssm = split_dtype(m, d).map(|(sd, _)| sd);
    ssm_mixers(m)
        .map(|mixer| {
            let on_gpu = state_elems_per_gpu(mixer, tp);
            let bytes = match ssm {
                None => bits_to_bytes("ovf_state_bytes", on_gpu, d.bits())?,
                Some(sd) => {
                    let rec = recurrent_per_gpu(mixer, tp);
                    add(
                        "ovf_state_bytes",
                        &[
                            bits_to_bytes("ovf_state_bytes", on_gpu - rec, d.bits())?,
                            bits_to_bytes("ovf_state_bytes", rec, sd.bits())?,
                        ],
                    )?
                }
            };
            Ok(Bytes(bytes))
        })
        .collect()
}

/// The mixer of each recurrent layer that keeps a state, in model order.
fn ssm_mixers(m: &ModelDesc) -> impl Iterator<Item = &Mixer> + '_ {
    m.layers
        .iter()
        .map(|l| &l.mixer)
        .filter(|mixer| whole_state_elems(mixer) > 0)
}

/// A mixer's recurrent state elements per sequence, before tensor parallelism (0 for
/// attention).
fn whole_state_elems(mixer: &Mixer) -> u64 {
    match *mixer {
        Mixer::Ssm { state_elems, .. } => state_elems,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::GIB;
    use crate::model::config::parse_model_text;

    fn model(json: &str) -> ModelDesc {
        match parse_model_text(json) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    const LLAMA2_7B: &str = r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,
        "num_attention_heads":32,"vocab_size":32000,"torch_dtype":"float16"}"#;

    #[test]
    fn llama2_7b_textbook() {
        // 2 × 32 layers × 32 KV heads × 128 (4096/32) × 2 B = 524,288 B = 0.5 MiB per token.
        let m = model(LLAMA2_7B);
        let t = per_token(&m, Dtype::Fp16, 1).map(|k| k.bytes.0).ok();
        assert_eq!(t, Some(2 * 32 * 32 * (4096 / 32) * 2));
        // × 4,096 tokens × 16 sequences = 32 GiB.
        let b = per_batch(&m, Dtype::Fp16, 1, 4096, 16)
            .map(|k| k.bytes.0)
            .ok();
        assert_eq!(b, Some(2 * 32 * 32 * 128 * 2 * 4096 * 16));
        assert_eq!(b, Some(32 * GIB));
        let d = per_token(&m, Dtype::Fp16, 1).map(|k| k.derivation).ok();
        assert_eq!(
            d.as_ref().map(|d| d.formula.as_str()),
            Some("2 × L × H_kv × d_head × b")
        );
        let d = d.unwrap_or_else(|| panic!("no derivation"));
        assert_eq!(d.substituted, "(32 × 2 × 32 × 128) × 2");
        assert_eq!(d.result, "524,288 B = 0.5 MiB");
    }

    #[test]
    fn llama3_8b_gqa() {
        // 2 × 32 × 8 × 128 × 2 = 131,072 B = 128 KiB.
        let m = model(
            r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
            "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,"torch_dtype":"bfloat16"}"#,
        );
        assert_eq!(
            per_token(&m, Dtype::Bf16, 1).map(|k| k.bytes.0).ok(),
            Some(2 * 32 * 8 * 128 * 2)
        );
        // TP 16 > 8 KV heads: one head per rank, replicated.
        assert_eq!(kv_heads_per_rank(8, 16), 1);
        assert_eq!(
            per_token(&m, Dtype::Bf16, 4).map(|k| k.bytes.0).ok(),
            Some(2 * 32 * 2 * 128 * 2)
        );
        assert!(matches!(
            per_token(&m, Dtype::Bf16, 3),
            Err(CalcError::TpDoesNotDivide { .. })
        ));
        // fp4 KV: half a byte per element.
        assert_eq!(
            per_token(&m, Dtype::Fp4, 1).map(|k| k.bytes.0).ok(),
            Some(2 * 32 * 8 * 128 / 2)
        );
    }

    #[test]
    fn sliding_window_caps() {
        // 2 layers, window 128 on layer 0 only; head_dim 64, 8 KV heads, bf16.
        let m = model(
            r#"{"model_type":"gpt_oss","hidden_size":256,"intermediate_size":256,"num_hidden_layers":2,
            "num_attention_heads":8,"num_key_value_heads":8,"head_dim":64,"vocab_size":100,"num_local_experts":4,
            "num_experts_per_tok":2,"sliding_window":128,"layer_types":["sliding_attention","full_attention"]}"#,
        );
        let per_layer = 2 * 8 * 64 * 2;
        assert_eq!(
            per_sequence(&m, Dtype::Bf16, 1, 1000)
                .map(|k| k.bytes.0)
                .ok(),
            Some(per_layer * (128 + 1000))
        );
        assert_eq!(
            per_sequence(&m, Dtype::Bf16, 1, 100)
                .map(|k| k.bytes.0)
                .ok(),
            Some(per_layer * (100 + 100))
        );
        assert_eq!(
            per_token(&m, Dtype::Bf16, 1).map(|k| k.bytes.0).ok(),
            Some(per_layer * 2)
        );
    }

    /// Two GLM-5-shaped layers (kv_lora_rank 32, rope 8), one running an indexer of width 256.
    const DSA: &str = r#"{"model_type":"glm_moe_dsa","hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":4,"q_lora_rank":32,"kv_lora_rank":32,"qk_nope_head_dim":8,
        "qk_rope_head_dim":8,"v_head_dim":8,"intermediate_size":96,"vocab_size":100,
        "index_n_heads":2,"index_head_dim":256,"index_topk_pattern":"FS"}"#;

    #[test]
    fn an_indexer_key_is_cached_in_fp8_beside_the_latent() {
        let m = model(DSA);
        // The latent (32 + 8) per layer at the KV precision; the indexer's key 256 fp8 bytes
        // and 256 / 128 = 2 fp32 scales, in the one layer that runs it, at any precision.
        let (latent, key) = (32 + 8, 256 + 2 * 4);
        let bytes = |d: Dtype, tp: u64| per_token(&m, d, tp).map(|k| k.bytes.0).ok();
        assert_eq!(bytes(Dtype::Bf16, 1), Some(2 * latent * 2 + key));
        assert_eq!(bytes(Dtype::Fp8, 1), Some(2 * latent + key));
        // Both replicated on every GPU.
        assert_eq!(bytes(Dtype::Bf16, 4), bytes(Dtype::Bf16, 1));
        // Every token is kept, in every sequence.
        let batch = per_batch(&m, Dtype::Bf16, 1, 1000, 3)
            .map(|k| k.bytes.0)
            .ok();
        assert_eq!(batch, Some((2 * latent * 2 + key) * 1000 * 3));
        let d = per_batch(&m, Dtype::Bf16, 1, 1000, 3).map(|k| k.derivation);
        let d = d.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            d.formula,
            "L × (r_kv + d_rope) × T × B × b + L_idx × d_idx × T × B"
        );
        assert_eq!(
            d.substituted,
            "(2 × (32 + 8) × 1000) × 3 × 2 + (1 × 264 × 1000) × 3"
        );
        assert!(d.notes.iter().any(|n| n == "note_kv_indexer"));
        let term = |s: &str| {
            d.terms
                .iter()
                .find(|t| t.symbol == s)
                .map(|t| t.value.clone())
        };
        assert_eq!(term("L_idx").as_deref(), Some("1"));
        assert_eq!(term("d_idx").as_deref(), Some("264"));
        // vLLM's profile of the same model: one layer's page holds both.
        let p =
            crate::calc::memory::KvProfile::from_model(&m, Dtype::Bf16, 1, Architecture::Unknown);
        let per_layer: Vec<u64> = p
            .map(|p| p.layers.iter().map(|l| l.bytes_per_token.0).collect())
            .unwrap_or_default();
        assert_eq!(per_layer, vec![latent * 2 + key, latent * 2]);
    }

    #[test]
    fn fp8_latent_of_a_sparse_model_is_in_fp8_ds_mla_on_hopper_only() {
        let m = model(DSA);
        // vLLM's fp8_ds_mla from the config's fields: kv_lora_rank (32) NoPE values in fp8,
        // one 4-byte fp32 scale per 128 of them (⌈32 / 128⌉ = 1), qk_rope_head_dim (8) in bf16.
        let (r_kv, d_rope): (u64, u64) = (32, 8);
        let ds = r_kv + r_kv.div_ceil(FP8_DS_MLA_SCALE_BLOCK) * 4 + d_rope * 2;
        assert_eq!(fp8_ds_mla_bytes_per_token(r_kv, d_rope), ds);
        // DeepSeek-V3.2's and GLM-5's 512 + 64: 512 + 4 × 4 + 64 × 2, vLLM's 656.
        assert_eq!(fp8_ds_mla_bytes_per_token(512, 64), 512 + 4 * 4 + 64 * 2);
        let key = 256 + 2 * 4;
        // The model-level figure keeps the plain fp8 latent, and its derivation says so.
        let d = per_batch(&m, Dtype::Fp8, 1, 1000, 3).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.bytes.0, (2 * (r_kv + d_rope) + key) * 1000 * 3);
        assert_eq!(
            d.derivation.substituted,
            "(2 × (32 + 8) × 1000) × 3 × 1 + (1 × 264 × 1000) × 3"
        );
        assert!(d.derivation.notes.iter().any(|n| n == "note_kv_fp8_ds_mla"));
        let bf16 = per_token(&m, Dtype::Bf16, 1).unwrap_or_else(|e| panic!("{e}"));
        assert!(!bf16
            .derivation
            .notes
            .iter()
            .any(|n| n == "note_kv_fp8_ds_mla"));
        // vLLM's profile on a GPU: fp8_ds_mla in both MLA layers on Hopper (one cache dtype per
        // engine, the layer without its own indexer too), the plain latent elsewhere.
        let per_layer = |arch: Architecture| -> Vec<u64> {
            crate::calc::memory::KvProfile::from_model(&m, Dtype::Fp8, 1, arch)
                .map(|p| p.layers.iter().map(|l| l.bytes_per_token.0).collect())
                .unwrap_or_default()
        };
        assert_eq!(per_layer(Architecture::Hopper), vec![ds + key, ds]);
        let plain = vec![r_kv + d_rope + key, r_kv + d_rope];
        for arch in [
            Architecture::Blackwell,
            Architecture::Ampere,
            Architecture::Unknown,
        ] {
            assert_eq!(per_layer(arch), plain, "{arch:?}");
        }
        // bf16 keeps the plain latent; a dense MLA model (no indexer) keeps plain fp8.
        assert!(!uses_fp8_ds_mla(&m, Dtype::Bf16, Architecture::Hopper));
        let dense = model(
            r#"{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,
            "num_attention_heads":4,"q_lora_rank":32,"kv_lora_rank":32,"qk_nope_head_dim":8,
            "qk_rope_head_dim":8,"v_head_dim":8,"intermediate_size":96,"vocab_size":100}"#,
        );
        assert!(!uses_fp8_ds_mla(&dense, Dtype::Fp8, Architecture::Hopper));
    }

    #[test]
    fn mamba_state_is_constant() {
        // d_inner 2·64 = 128, N 16, k 4: (4 − 1)·128 + 128·16 = 2,432 elements per layer, 2 layers, fp16.
        let m = model(
            r#"{"model_type":"mamba","hidden_size":64,"num_hidden_layers":2,"vocab_size":100,"state_size":16,
            "expand":2,"conv_kernel":4,"time_step_rank":4,"torch_dtype":"float16"}"#,
        );
        assert_eq!(
            per_sequence(&m, Dtype::Fp16, 1, 4096)
                .map(|k| k.bytes.0)
                .ok(),
            Some(0)
        );
        assert_eq!(
            state_bytes(&m, Dtype::Fp16, 1).map(|k| k.bytes.0).ok(),
            Some(2 * (3 * 128 + 128 * 16) * 2)
        );
    }
}
