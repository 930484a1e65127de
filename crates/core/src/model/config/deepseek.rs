//! DeepSeek-V2/V3 (and Kimi-K2, A.X K1): multi-head latent attention plus DeepSeekMoE.
//!
//! Attention per layer: q (`h·H·(d_nope + d_rope)`, or with `q_lora_rank` r_q:
//! `h·r_q + r_q + r_q·H·(d_nope + d_rope)`), kv_a_proj_with_mqa `h·(r_kv + d_rope)`,
//! kv_a_layernorm `r_kv`, kv_b_proj `r_kv·H·(d_nope + d_v)`, o_proj `H·d_v·h`.
//! Layers before `first_k_dense_replace` (and off `moe_layer_freq`) are dense (`3·h·I`); the
//! others have a router `E·h` (+ `E` correction bias with `topk_method = noaux_tc`), routed
//! experts `E·3·h·I_e` and shared experts `3·h·(n_shared·I_e)`. Multi-token-prediction modules
//! (`num_nextn_predict_layers`) are counted in `other` and `mtp` as the checkpoint stores them:
//! one MoE decoder layer + enorm + hnorm + eh_proj `2h·h` + shared_head.norm each, plus their
//! own copies of the embedding and head `2·V·h` (the model card's 671B is the main model; the
//! Hub's 684,489,830,400 is the checkpoint). A.X K1 (`axk1`) is DeepSeek-V3's layout with an
//! RMSNorm `h` after every layer's MLP.
//!
//! GLM-4.7-Flash (`glm4_moe_lite`, `Glm4MoeLiteForCausalLM`) is the same layout: vLLM builds it
//! from DeepSeek-V2's MLA attention and GLM-4.5's `Glm4MoE`, whose router is a sigmoid gate with
//! an `e_score_correction_bias` whatever `topk_method` says, both allocated in fp32 (`E·h + E`
//! per MoE layer). `Glm4MoeLiteConfig` states which layers are MoE as `mlp_layer_types`
//! ("dense" / "sparse", by default the first layer dense); the checkpoint's config gives
//! `first_k_dense_replace` 1 and one MTP layer with its own embedding and head, which together
//! give the Hub's 31,221,488,576.
//!
//! DeepSeek-V3.2 (`deepseek_v32`) and GLM-5 (`glm_moe_dsa`) add DeepSeek Sparse Attention's
//! indexer to the attention of every layer that runs it (the MTP layer's too): `wq_b`
//! `r_q·n·d_i` (from the compressed query), `wk` `h·d_i`, `k_norm` a LayerNorm `2·d_i`,
//! `weights_proj` `h·n` (n = `index_n_heads`, d_i = `index_head_dim`). vLLM keeps `wk` and
//! `weights_proj` unquantized (one merged bf16 GEMM) and replicates the indexer on every GPU.
//! GLM's `indexer_types` (or `index_topk_pattern`, or `index_topk_freq` with
//! `index_skip_topk_offset`) name layers that reuse the previous layer's top-k and have no
//! indexer. Each indexer caches one key per token beside the MLA latent: vLLM's
//! `DeepseekV32IndexerCache` holds `d_i` fp8 bytes and a 4-byte fp32 scale per 128 of them
//! (`head_dim + head_dim // 128 * 4` uint8, whatever the KV cache's dtype,
//! [`MlaIndexer::cache_bytes_per_token`]); the ledger states it (`indexer_k_cache`), and each
//! layer that runs an indexer carries it in its mixer, so the KV figures count it beside the
//! latent (vLLM pages the two in one KV cache group whose page is the sum of every layer's).

use super::common::{
    kind_per_layer, not_one_per_layer, read_max_pos, read_tie, read_top_k, MLP_LAYER_KINDS,
};
use super::kit::{
    add_dense_ffn, add_embeddings, add_mlp, add_mtp_modules, add_routed_experts, Acc, Comp,
    MtpHeads, Parts,
};
use super::reader::Reader;
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, LedgerSource, Mixer, MlaIndexer};

/// The sizes read from the config.
struct Dims {
    h: u64,
    n_layers: u64,
    vocab: u64,
    heads: u64,
    q_lora: Option<u64>,
    kv_lora: u64,
    nope: u64,
    rope: u64,
    v: u64,
    inter: u64,
    moe_inter: u64,
    experts: u64,
    shared: u64,
    top_k: u64,
    first_dense: u64,
    freq: u64,
    /// Which layers are MoE when the config lists them (`mlp_layer_types`), else `None`.
    moe_layers: Option<Vec<bool>>,
    corr_bias: bool,
    /// Whether vLLM holds the router gate `E·h` in fp32 (GLM's `Glm4MoE`).
    gate_fp32: bool,
    /// The sparse-attention indexer (`index_n_heads`, `index_head_dim`), if any.
    indexer: Option<MlaIndexer>,
}

/// Adds one DeepSeek Sparse Attention indexer of `n` heads of width `di` (see the module).
fn add_indexer(acc: &mut Acc, d: &Dims, ix: MlaIndexer) -> Result<(), CalcError> {
    let w = "ovf_attention_params";
    let (n, di) = (ix.heads, ix.head_dim);
    let rq = d.q_lora.unwrap_or(d.h);
    acc.lin(Comp::Attn, mul(w, &[rq, n, di])?)?;
    acc.add(Comp::Attn, mul(w, &[d.h, add(w, &[di, n])?])?)?;
    acc.add(Comp::Attn, mul(w, &[2, di])?)
}

/// The sizes of one multi-head latent attention block.
pub(super) struct MlaShape {
    pub heads: u64,
    /// `q_lora_rank`; `None`: the queries are not compressed.
    pub q_lora: Option<u64>,
    pub kv_lora: u64,
    pub nope: u64,
    pub rope: u64,
    pub v: u64,
}

impl MlaShape {
    /// The mixer of this attention (no sparse-attention indexer).
    pub(super) fn mixer(&self) -> Mixer {
        Mixer::Mla {
            num_heads: self.heads,
            kv_lora_rank: self.kv_lora,
            q_lora_rank: self.q_lora,
            qk_nope_head_dim: self.nope,
            qk_rope_head_dim: self.rope,
            v_head_dim: self.v,
            indexer: None,
        }
    }
}

/// The projections of one MLA block in a model of width `h` (see the module): q (compressed
/// through `q_a_proj`, `q_a_layernorm`, `q_b_proj` with a `q_lora_rank`), kv_a_proj_with_mqa,
/// kv_a_layernorm, kv_b_proj, o_proj; no biases.
pub(super) fn add_mla(acc: &mut Acc, h: u64, m: &MlaShape) -> Result<(), CalcError> {
    let w = "ovf_attention_params";
    let qk = add(w, &[m.nope, m.rope])?;
    match m.q_lora {
        Some(rq) => {
            acc.lin(Comp::Attn, mul(w, &[h, rq])?)?;
            acc.add(Comp::Attn, rq)?;
            acc.lin(Comp::Attn, mul(w, &[rq, m.heads, qk])?)?;
        }
        None => acc.lin(Comp::Attn, mul(w, &[h, m.heads, qk])?)?,
    }
    acc.lin(Comp::Attn, mul(w, &[h, add(w, &[m.kv_lora, m.rope])?])?)?;
    acc.add(Comp::Attn, m.kv_lora)?;
    acc.lin(
        Comp::Attn,
        mul(w, &[m.kv_lora, m.heads, add(w, &[m.nope, m.v])?])?,
    )?;
    acc.lin(Comp::Attn, mul(w, &[m.heads, m.v, h])?)
}

fn layer(acc: &mut Acc, d: &Dims, moe: bool, indexer: bool) -> Result<Ffn, CalcError> {
    if let (true, Some(ix)) = (indexer, d.indexer) {
        add_indexer(acc, d, ix)?;
    }
    let shape = MlaShape {
        heads: d.heads,
        q_lora: d.q_lora,
        kv_lora: d.kv_lora,
        nope: d.nope,
        rope: d.rope,
        v: d.v,
    };
    add_mla(acc, d.h, &shape)?;
    acc.norms(2, d.h)?;
    if moe {
        let routed = (d.experts, d.top_k, d.moe_inter);
        let ffn = add_routed_experts(acc, d.h, routed, (d.shared, d.moe_inter))?;
        if d.corr_bias {
            // vLLM's `DeepseekV2MoE` allocates `e_score_correction_bias` in fp32.
            acc.add(Comp::Router, d.experts)?;
            acc.router_fp32(d.experts)?;
        }
        if d.gate_fp32 {
            acc.router_fp32(mul("ovf_router_params", &[d.experts, d.h])?)?;
        }
        let shared_inter = mul("ovf_shared_expert", &[d.shared, d.moe_inter])?;
        if shared_inter > 0 {
            add_mlp(acc, Comp::Mlp, d.h, shared_inter, true, false)?;
        }
        Ok(ffn)
    } else {
        add_dense_ffn(acc, d.h, d.inter, true, false)
    }
}

/// The routed-expert settings of a DeepSeekMoE model (all zero for a dense one).
struct Routing {
    moe_inter: u64,
    shared: u64,
    top_k: u64,
    first_dense: u64,
    freq: u64,
    moe_layers: Option<Vec<bool>>,
    corr_bias: bool,
    gate_fp32: bool,
}

/// Reads the MoE settings when `experts > 0`: expert width, shared experts, top-k, the dense
/// prefix, the MoE layer frequency, and whether the router has a correction bias.
fn read_routing(r: &mut Reader, fam: &str, experts: u64) -> Result<Routing, CalcError> {
    if experts == 0 {
        return Ok(Routing {
            moe_inter: 0,
            shared: 0,
            top_k: 0,
            first_dense: 0,
            freq: 1,
            moe_layers: None,
            corr_bias: false,
            gate_fp32: false,
        });
    }
    let moe_inter = r.req(
        ("expert_intermediate", "moe_intermediate_size"),
        "why_size_experts",
    )?;
    let shared = r.or0(
        ("shared_experts", "n_shared_experts"),
        0,
        "ldg_no_n_shared_experts_none",
    )?;
    let top_k = read_top_k(r, experts, None)?;
    // GLM-4.7-Flash: vLLM reads `first_k_dense_replace` (as the checkpoint's config gives it);
    // without it, `Glm4MoeLiteConfig`'s `mlp_layer_types`, else its default (the first layer
    // dense).
    let glm = fam == "glm4_moe_lite";
    let moe_layers = if glm && r.find("first_k_dense_replace").is_none() {
        mlp_layer_types(r)?
    } else {
        None
    };
    let (first, freq) = if moe_layers.is_some() {
        (0, 1)
    } else {
        let first = if glm {
            r.or0(
                "first_k_dense_replace",
                1,
                "ldg_glm4_moe_lite_first_layer_dense",
            )?
        } else {
            r.or0(
                "first_k_dense_replace",
                0,
                "ldg_no_first_k_dense_replace_every_layer",
            )?
        };
        let freq = r.or(
            "moe_layer_freq",
            1,
            "ldg_no_moe_layer_freq_every_layer_after",
        )?;
        (first, freq)
    };
    let method = r.string("topk_method").map(|(_, s)| s.to_string());
    let v3_router = matches!(fam, "deepseek_v3" | "axk1" | "deepseek_v32" | "glm_moe_dsa");
    // GLM's `Glm4MoE` has the bias whatever `topk_method` says.
    let corr = glm || method.as_deref() == Some("noaux_tc") || (v3_router && method.is_none());
    if corr {
        let why = if glm {
            "ldg_glm4_moe_lite_routing_bias"
        } else {
            "ldg_topk_method_noaux_tc_one_routing_bias"
        };
        r.derived("e_score_correction_bias", experts, why);
    }
    if glm {
        r.derived("router_dtype", "fp32", "ldg_glm4_moe_lite_router_fp32");
    }
    Ok(Routing {
        moe_inter,
        shared,
        top_k,
        first_dense: first,
        freq,
        moe_layers,
        corr_bias: corr,
        gate_fp32: glm,
    })
}

/// `Glm4MoeLiteConfig`'s `mlp_layer_types`, one "dense" or "sparse" (MoE) per layer, if given
/// (checked against the layer count by the caller).
fn mlp_layer_types(r: &mut Reader) -> Result<Option<Vec<bool>>, CalcError> {
    kind_per_layer(r, "mlp_layer_types", None, MLP_LAYER_KINDS)
}

/// Reads the MLA and model sizes, then the routing (through [`read_routing`]).
fn read_dims(r: &mut Reader, fam: &str) -> Result<Dims, CalcError> {
    let super::common::Dims {
        h,
        n_layers: n,
        heads,
        vocab,
    } = super::common::read_dims(r, fam)?;
    let kv_lora = r.req("kv_lora_rank", "why_size_mla_latent")?;
    let q_lora = r.opt("q_lora_rank")?;
    if q_lora.is_none() {
        r.default_note("q_lora_rank", "none", "ldg_q_lora_rank_is_null_queries_are");
    }
    let nope = r.req("qk_nope_head_dim", "why_size_mla_heads")?;
    let rope = r.req("qk_rope_head_dim", "why_size_mla_heads")?;
    let v = r.req("v_head_dim", "why_size_mla_value_heads")?;
    let inter = r.req("intermediate_size", "why_size_dense")?;
    let experts = r.or0(
        ("experts", "num_local_experts"),
        0,
        "ldg_no_n_routed_experts_dense_model",
    )?;
    let rt = read_routing(r, fam, experts)?;
    if let Some(types) = &rt.moe_layers {
        if types.len() as u64 != n {
            return Err(not_one_per_layer("mlp_layer_types", types.len(), n));
        }
    }
    let indexer = read_indexer(r, fam, q_lora)?;
    Ok(Dims {
        h,
        n_layers: n,
        vocab,
        heads,
        q_lora,
        kv_lora,
        nope,
        rope,
        v,
        inter,
        moe_inter: rt.moe_inter,
        experts,
        shared: rt.shared,
        top_k: rt.top_k,
        first_dense: rt.first_dense,
        freq: rt.freq,
        moe_layers: rt.moe_layers,
        corr_bias: rt.corr_bias,
        gate_fp32: rt.gate_fp32,
        indexer,
    })
}

/// Reads the sparse-attention indexer of DeepSeek-V3.2 and GLM-5 (`None` for the other
/// families): `index_n_heads` and `index_head_dim`, which need the compressed query
/// (`q_lora_rank`) the indexer projects from.
fn read_indexer(
    r: &mut Reader,
    fam: &str,
    q_lora: Option<u64>,
) -> Result<Option<MlaIndexer>, CalcError> {
    if !matches!(fam, "deepseek_v32" | "glm_moe_dsa") {
        return Ok(None);
    }
    let n = r.req("index_n_heads", "why_size_attention")?;
    let di = r.req("index_head_dim", "why_size_attention")?;
    if q_lora.is_none() {
        return Err(CalcError::MissingKey {
            key: "q_lora_rank".into(),
            why: Phrase::tr("why_size_mla_heads"),
        });
    }
    let ix = MlaIndexer {
        heads: n,
        head_dim: di,
    };
    let per_token = ix.cache_bytes_per_token();
    r.note(
        "indexer_k_cache",
        format!("{per_token} B"),
        LedgerSource::Key(
            r.key_of("index_head_dim")
                .unwrap_or("index_head_dim")
                .into(),
        ),
    );
    Ok(Some(ix))
}

/// Which layers run their own indexer (GLM's `indexer_types` "full" / "shared", or the
/// `index_topk_pattern` string of F and S, or every `index_topk_freq`-th layer after
/// `index_skip_topk_offset`); every layer when none is given.
fn indexer_layers(r: &mut Reader, n_layers: u64) -> Result<Vec<bool>, CalcError> {
    if let Some(types) = r.str_list("indexer_types")? {
        if types.len() as u64 != n_layers {
            return Err(not_one_per_layer("indexer_types", types.len(), n_layers));
        }
        return Ok(types.iter().map(|t| t != "shared").collect());
    }
    if let Some((k, pattern)) = r.string("index_topk_pattern") {
        if pattern.chars().count() as u64 != n_layers {
            return Err(not_one_per_layer(k, pattern.chars().count(), n_layers));
        }
        return Ok(pattern.chars().map(|c| c != 'S').collect());
    }
    let freq = r.opt("index_topk_freq")?.unwrap_or(1);
    let offset = match r.find("index_skip_topk_offset") {
        Some((k, v)) => Reader::to_u64(k, v, 0)?,
        None => 2,
    };
    Ok((0..n_layers)
        .map(|i| (i + 1).saturating_sub(offset).is_multiple_of(freq))
        .collect())
}

/// Adds the multi-token-prediction modules (one MLA + MoE decoder layer each, see
/// [`add_mtp_modules`]).
fn add_mtp(r: &mut Reader, acc: &mut Acc, d: &Dims, mtp: u64) -> Result<(), CalcError> {
    let mut m = Acc::default();
    for _ in 0..mtp {
        // An MTP layer always runs its own indexer (vLLM builds one whatever the backbone's
        // top-k sharing says).
        let ffn = layer(&mut m, d, d.experts > 0, true)?;
        m.mtp_layers.push(Layer {
            mixer: mla_mixer(d, true),
            ffn,
        });
    }
    add_mtp_modules(r, acc, m, mtp, (d.vocab, d.h), MtpHeads::OwnCopies)
}

/// One layer's MLA mixer, with the sparse-attention indexer when the model has one and the
/// layer runs its own (`own_indexer`).
fn mla_mixer(d: &Dims, own_indexer: bool) -> Mixer {
    Mixer::Mla {
        num_heads: d.heads,
        kv_lora_rank: d.kv_lora,
        q_lora_rank: d.q_lora,
        qk_nope_head_dim: d.nope,
        qk_rope_head_dim: d.rope,
        v_head_dim: d.v,
        indexer: d.indexer.filter(|_| own_indexer),
    }
}

/// Builds a DeepSeek-V2/V3 model.
pub(super) fn build(r: &mut Reader, fam: &str) -> Result<Parts, CalcError> {
    if fam == "glm4_moe_lite" {
        r.derived("layout", "deepseek_v3", "ldg_glm4_moe_lite_layout");
    }
    let d = read_dims(r, fam)?;
    let (h, vocab) = (d.h, d.vocab);
    if r.flag(
        "attention_bias",
        false,
        "ldg_deepseek_default_no_attention_biases",
    )? {
        r.warnings.push(Phrase::tr("wrn_mla_bias"));
    }
    let mtp = r.or0(
        ("mtp_layers", "num_nextn_predict_layers"),
        0,
        "ldg_no_num_nextn_predict_layers_no_multi",
    )?;
    let tie = read_tie(r, false, fam)?;

    let mut acc = Acc::default();
    let mut layers = Vec::new();
    // A.X K1: a post_mlp_layernorm after every layer's MLP, stored for the dense layer too
    // (AXK1PreTrainedModel ignores that one on load; the checkpoint keeps it).
    let post_mlp = fam == "axk1";
    if post_mlp {
        r.derived("post_mlp_layernorm", d.n_layers, "ldg_axk1_post_mlp_norm");
    }
    let indexed = if d.indexer.is_some() {
        indexer_layers(r, d.n_layers)?
    } else {
        Vec::new()
    };
    for i in 0..d.n_layers {
        let moe = d.experts > 0
            && match &d.moe_layers {
                Some(types) => types.get(i as usize).copied().unwrap_or(false),
                None => i >= d.first_dense && i.is_multiple_of(d.freq),
            };
        let own_indexer = indexed.get(i as usize).copied().unwrap_or(false);
        let ffn = layer(&mut acc, &d, moe, own_indexer)?;
        if post_mlp {
            acc.norms(1, h)?;
        }
        layers.push(Layer {
            mixer: mla_mixer(&d, own_indexer),
            ffn,
        });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    if mtp > 0 {
        add_mtp(r, &mut acc, &d, mtp)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, max_pos))
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;

    /// A small dense GLM-5-shaped config: h 64, 4 layers, 2 heads, q_lora 32, kv_lora 16,
    /// nope 8, rope 8, v 8, MLP 96, V 100; an indexer of 2 heads of 16.
    const SMALL: &str = r#"{"model_type":"glm_moe_dsa","hidden_size":64,"num_hidden_layers":4,
        "num_attention_heads":2,"q_lora_rank":32,"kv_lora_rank":16,"qk_nope_head_dim":8,
        "qk_rope_head_dim":8,"v_head_dim":8,"intermediate_size":96,"vocab_size":100,
        "index_n_heads":2,"index_head_dim":16}"#;

    /// Per layer: norms 128; q_a 64·32 + 32, q_b 32·2·16, kv_a 64·24 + 16, kv_b 16·2·16, o
    /// 2·8·64 = 6,192; MLP 3·64·96 = 18,432. Four layers, the final norm 64, the embedding and
    /// the head 2·100·64: 4·24,752 + 64 + 12,800 = 111,872.
    const WITHOUT_INDEXERS: u64 = 111_872;

    /// One indexer: wq_b 32·2·16 = 1,024, wk 64·16 = 1,024, k_norm 2·16, weights_proj 64·2.
    const INDEXER: u64 = 1_024 + 1_024 + 32 + 128;

    fn total(cfg: &str) -> Option<u64> {
        parse_model_text(cfg).ok().map(|m| m.params.total)
    }

    #[test]
    fn an_indexer_in_every_layer_that_runs_one() {
        assert_eq!(total(SMALL), Some(WITHOUT_INDEXERS + 4 * INDEXER));
        let with =
            |extra: &str| SMALL.replace("\"index_n_heads\"", &format!("{extra},\"index_n_heads\""));
        // Layer 2 reuses layer 1's top-k and has no indexer.
        let types = with(r#""indexer_types":["full","full","shared","full"]"#);
        assert_eq!(total(&types), Some(WITHOUT_INDEXERS + 3 * INDEXER));
        // Every 2nd layer after the first two (offset 2): layers 0, 1 and 3 run one.
        assert_eq!(
            total(&with(r#""index_topk_freq":2"#)),
            Some(WITHOUT_INDEXERS + 3 * INDEXER)
        );
        assert_eq!(
            total(&with(r#""index_topk_pattern":"FSSS""#)),
            Some(WITHOUT_INDEXERS + INDEXER)
        );
        // The same config read as DeepSeek-V3 has no indexer (no routed experts stated, as
        // DeepseekV3Config would otherwise fill its 256).
        let v3 = SMALL.replace("\"glm_moe_dsa\"", "\"deepseek_v3\",\"n_routed_experts\":0");
        assert_eq!(total(&v3), Some(WITHOUT_INDEXERS));
        // vLLM's indexer cache: 16 fp8 bytes, no whole block of 128 for a scale.
        let m = parse_model_text(SMALL).ok();
        let stated = m.and_then(|m| {
            m.ledger
                .into_iter()
                .find(|e| e.field == "indexer_k_cache")
                .map(|e| e.value)
        });
        assert_eq!(stated.as_deref(), Some("16 B"));
    }

    /// The KV bytes per token at bf16: each layer's latent (16 + 8) × 2 B, and in each layer
    /// that runs an indexer its 16-byte key (fp8, no whole block of 128 for a scale).
    #[test]
    fn each_indexer_caches_its_key_beside_the_latent() {
        use crate::base::dtype::Dtype;
        use crate::calc::kv::per_token;
        let kv = |cfg: &str| {
            parse_model_text(cfg)
                .ok()
                .and_then(|m| per_token(&m, Dtype::Bf16, 1).ok())
                .map(|k| k.bytes.0)
        };
        let latent = (16 + 8) * 2;
        assert_eq!(kv(SMALL), Some(4 * latent + 4 * 16));
        let shared = SMALL.replace(
            "\"index_n_heads\"",
            r#""indexer_types":["full","shared","shared","full"],"index_n_heads""#,
        );
        assert_eq!(kv(&shared), Some(4 * latent + 2 * 16));
        // A wider key: 256 fp8 bytes and two fp32 scales.
        let wide = SMALL.replace("\"index_head_dim\":16", "\"index_head_dim\":256");
        assert_eq!(kv(&wide), Some(4 * latent + 4 * (256 + 2 * 4)));
    }

    /// GLM-4.7-Flash's config (the corpus file `zai-org__GLM-4.7-Flash.json`, reconstructed
    /// from the values vLLM's `glm4_moe_lite` config test quotes from the checkpoint).
    const GLM_FLASH: &str =
        include_str!("../../../../../tests/fixtures/corpus/zai-org__GLM-4.7-Flash.json");

    /// The count from the config's fields, as `Glm4MoeLiteForCausalLM` builds it: MLA
    /// attention, one dense layer then MoE layers, an untied head, and one MTP layer with its
    /// own embedding and head.
    #[test]
    fn glm_4_7_flash_is_counted_exactly_from_its_fields() {
        let (h, layers, vocab) = (2048u64, 47u64, 154_880u64);
        let (heads, q_lora, kv_lora) = (20u64, 768u64, 512u64);
        let (nope, rope, v) = (192u64, 64u64, 256u64);
        let (inter, moe_inter, experts, shared) = (10_240u64, 1_536u64, 64u64, 1u64);
        // q_a + q_a_layernorm + q_b, kv_a_proj_with_mqa + kv_a_layernorm, kv_b, o_proj, and
        // the two layer norms: 21,763,328.
        let attn = h * q_lora
            + q_lora
            + q_lora * heads * (nope + rope)
            + h * (kv_lora + rope)
            + kv_lora
            + kv_lora * heads * (nope + v)
            + heads * v * h
            + 2 * h;
        let dense = 3 * h * inter;
        // Router E·h, its correction bias E, routed experts and the shared one: 613,548,096.
        let moe = experts * h + experts + experts * 3 * h * moe_inter + shared * 3 * h * moe_inter;
        let embed_and_head = 2 * vocab * h;
        let main = layers * attn + dense + (layers - 1) * moe + h + embed_and_head;
        // enorm, hnorm, eh_proj 2h·h, shared_head.norm, one MLA + MoE layer, its own embedding
        // and head.
        let mtp = 3 * h + 2 * h * h + attn + moe + embed_and_head;
        assert_eq!((main, mtp), (29_943_393_920, 1_278_094_656));
        let Ok(m) = parse_model_text(GLM_FLASH) else {
            panic!("GLM-4.7-Flash does not parse");
        };
        assert_eq!(m.params.language_model, main);
        assert_eq!(m.params.mtp, mtp);
        // The Hub's safetensors total of zai-org/GLM-4.7-Flash.
        assert_eq!(m.params.total, 31_221_488_576);
        // Read by its family: the only warning says what the MTP layer adds.
        let warned: Vec<String> = m.warnings.iter().map(ToString::to_string).collect();
        assert!(
            warned.len() == 1 && warned[0].contains("= main model 29,943,393,920 + MTP"),
            "{warned:?}"
        );
        let layout = m.ledger.iter().find(|e| e.field == "layout");
        assert_eq!(layout.map(|e| e.value.as_str()), Some("deepseek_v3"));
        // vLLM's Glm4MoE holds each MoE layer's gate and bias in fp32 (46 layers and the MTP's).
        assert_eq!(
            m.params.router_fp32,
            (layers - 1 + 1) * (experts * h + experts)
        );
    }

    /// GLM-4.7-Flash caches the MLA latent per layer: 47 × (512 + 64) × 2 B at bf16, and the
    /// MTP layer's too only when it is loaded for speculative decoding.
    #[test]
    fn glm_4_7_flash_caches_the_latent() {
        use crate::base::dtype::Dtype;
        use crate::calc::kv::per_token;
        let Ok(mut m) = parse_model_text(GLM_FLASH) else {
            panic!("GLM-4.7-Flash does not parse");
        };
        let kv = |m: &crate::model::ModelDesc| per_token(m, Dtype::Bf16, 1).ok().map(|k| k.bytes.0);
        assert_eq!(kv(&m), Some(47 * (512 + 64) * 2));
        m.load_mtp = true;
        assert_eq!(kv(&m), Some(48 * (512 + 64) * 2));
    }

    /// `mlp_layer_types` (the transformers class's spelling) stands for `first_k_dense_replace`
    /// when that is absent; without either the first layer is dense; a wrong entry is refused.
    #[test]
    fn glm_4_7_flash_reads_its_mlp_layer_types() {
        let total = |cfg: &str| parse_model_text(cfg).map(|m| m.params.total);
        let want = total(GLM_FLASH).ok();
        let without = GLM_FLASH.replace("\"first_k_dense_replace\": 1,", "");
        assert_ne!(without, GLM_FLASH);
        assert_eq!(total(&without).ok(), want);
        let types = format!("[\"dense\"{}]", ",\"sparse\"".repeat(46));
        let listed = without.replace(
            "\"num_nextn_predict_layers\"",
            &format!("\"mlp_layer_types\": {types}, \"num_nextn_predict_layers\""),
        );
        assert_eq!(total(&listed).ok(), want);
        let bad = listed.replacen("\"sparse\"", "\"moe\"", 1);
        assert!(matches!(
            parse_model_text(&bad),
            Err(crate::base::error::CalcError::BadValue { key, .. }) if key == "mlp_layer_types"
        ));
        let short = listed.replacen(",\"sparse\"", "", 1);
        assert!(parse_model_text(&short).is_err());
    }
}
