//! Stored weight bytes: for the checkpoint's own format and for any chosen precision, in
//! total and per GPU under tensor parallelism, each with its derivation.
//!
//! Rules (all integer bytes):
//! * Plain formats (fp32, bf16, fp16, and any format when no quantizable split is known):
//!   `P × bits / 8`, rounded up once.
//! * Quantized formats store the decoder's linear weight matrices `P_q`
//!   ([`ParamBreakdown::linear`](crate::model::ParamBreakdown), or only the routed
//!   experts with `experts_only`) at `bits` per element plus, per group of `g` elements, a
//!   scale of `s` bits and (asymmetric int) a zero point of `bits` bits:
//!   `⌈P_q·bits/8⌉ + ⌈⌈P_q/g⌉·(s + z)/8⌉`. Groups are counted over the whole quantized
//!   set, which equals the per-tensor count whenever every row length is a multiple of `g`
//!   (true for real checkpoints). Everything else (embeddings, lm_head, norms, biases,
//!   routers) stays at the base precision (`torch_dtype`; bf16 if that is below 16 bits),
//!   but the routers vLLM keeps in fp32 (`ParamBreakdown::router_fp32`: MiniMax's, GLM-4.5's,
//!   ERNIE 4.5's, the correction biases) add `4 − b` bytes each, on every GPU.
//! * fp8/int8 without blocks: one scale per tensor or per output channel, below 0.01 % of the
//!   bytes, is noted and not counted.
//! * Chosen precisions ([`format_for`]): int4 = 4 bits + fp16 scale + 4-bit zero point per
//!   128 (AWQ style); fp4 = MXFP4 (4 bits + 8-bit e8m0 scale per 32); fp6 = MXFP6 (8-bit
//!   scale per 32); fp8/int8 = 1 B, per-tensor scale not counted.
//! * Tensor parallelism of degree `t` ([`per_gpu`], the one rule for every caller: the vLLM
//!   budget, the report, performance, loading, the planner and `llmcalc model --tp`): the
//!   degree is checked by [`crate::calc::tp::check_model`]; attention heads, MLP and
//!   expert matrices, embeddings and lm_head (vocab-parallel) are split `t` ways (rounded up);
//!   norms, routers, learned position embeddings and MLA's down-projections (`q_a_proj`,
//!   `kv_a_proj_with_mqa`, with their norms) and a latent MoE's projections are replicated
//!   on every GPU; when `t` exceeds the
//!   KV heads, each GPU also holds a whole K and V head. Each class keeps its bytes per
//!   element. A safetensors index's exact size adds its surplus over the class rule split
//!   evenly.
//!
//! Where each part lives: one format's bytes and their derivations in `bytes`; one GPU's
//! share under tensor parallelism in `shard`; a model's bytes for its checkpoint or a chosen
//! precision in `checkpoint`.

mod bytes;
mod checkpoint;
mod shard;

pub use bytes::{format_for, is_plain, nvfp4, quantized_bytes, unquantized_dtype, WeightBytes};
pub use checkpoint::{checkpoint, chosen, with_dtype, with_format};
pub use shard::per_gpu;

/// What the tests of this folder share: Llama-2-7B's config (fp16, untied head).
#[cfg(test)]
mod test_support {
    use crate::model::config::parse_model_text;
    use crate::model::ModelDesc;

    pub(super) fn llama2() -> Option<ModelDesc> {
        parse_model_text(
            r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,
            "num_attention_heads":32,"vocab_size":32000,"tie_word_embeddings":false,"torch_dtype":"float16"}"#,
        )
        .ok()
    }
}
