//! SGLang's and TensorRT-LLM's resolution of the engine's knobs (`sim::engines` gives each
//! default and its source): their defaults, their KV pools and SGLang's recurrent-state
//! slots beside the attention pool of a hybrid model.

use super::{whole, within, EngineConfig, MAX_ENGINE_KNOB};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;
use crate::calc::kv::state_bytes_in;
use crate::calc::memory::{vllm_budget, KvProfile, VllmInputs, DEFAULT_MAX_NUM_SEQS};
use crate::hardware::Accelerator;
use crate::model::desc::LedgerSource;
use crate::model::{Mixer, ModelDesc};
use crate::sim::engines::{
    sglang_chunked_prefill_size, sglang_hybrid_split, sglang_max_running_requests,
    sglang_mem_fraction_static, sglang_page_size, sglang_pool_bytes, sglang_state_running_cap,
    smi_mib, trtllm_pool_bytes, EngineKind, EnginePool, HybridSplitInputs, Policy,
    SGLANG_MAX_PREFILL_TOKENS, SGLANG_SPEC_MAX_RUNNING_REQUESTS, TRTLLM_FREE_GPU_MEMORY_FRACTION,
    TRTLLM_MAX_BATCH_SIZE, TRTLLM_MAX_NUM_TOKENS, TRTLLM_TOKENS_PER_BLOCK,
};
use crate::sim::resolved::{BlockGroup, Resolved};

impl EngineConfig {
    /// SGLang's or TensorRT-LLM's defaults and pool (`sim::engines`): one full-attention
    /// group of pages, every attention layer holding every token (neither engine's
    /// sliding-window pools are modelled). A model with recurrent layers gets SGLang's
    /// state slots beside its attention pool (`sim::engines::sglang_hybrid_split`, the
    /// running requests capped by them, pages of 1 token by default on Blackwell, where
    /// SGLang picks `triton` or `flashinfer` attention for these models); TensorRT-LLM's
    /// state pool is not modelled, and such a model is refused there.
    pub(super) fn resolve_other(
        &self,
        model: &ModelDesc,
        gpu: &Accelerator,
    ) -> Result<Resolved, CalcError> {
        let (tp, mml, max_model_len_assumed, max_model_len_derived) =
            self.common_checks(model, gpu)?;
        let sglang = self.engine == EngineKind::Sglang;
        let hybrid = model
            .layers
            .iter()
            .any(|l| matches!(l.mixer, Mixer::Ssm { state_elems, .. } if state_elems > 0));
        let smi = smi_mib(gpu);
        let mnbt = match (self.max_num_batched_tokens, sglang) {
            (Some(t), _) => t,
            (None, true) => sglang_chunked_prefill_size(smi),
            (None, false) => TRTLLM_MAX_NUM_TOKENS,
        };
        let mnbt = whole("max_num_batched_tokens", mnbt, 1, MAX_ENGINE_KNOB)?;
        let page = match (self.page_size, sglang) {
            (Some(p), _) => p,
            (None, true) if hybrid => 1,
            (None, true) => sglang_page_size(gpu),
            (None, false) => TRTLLM_TOKENS_PER_BLOCK,
        };
        let page = whole("page_size", page, 1, 4096)?;
        let fraction = match (self.memory_fraction, sglang) {
            (Some(f), _) => f,
            (None, true) => sglang_mem_fraction_static(smi, tp, mnbt),
            (None, false) => TRTLLM_FREE_GPU_MEMORY_FRACTION,
        };
        within(
            "memory_fraction",
            fraction,
            fraction > 0.0 && fraction <= 1.0,
            "rng_sim_memory_fraction",
        )?;
        let (terms, mut inp) = self.other_pool(model, gpu, (tp, mnbt, page, mml), fraction)?;
        let (pool, per_token) = (terms.pool, terms.per_token);
        inp.available_kv_override = Some(pool);
        let budget = vllm_budget(&inp, &KvProfile::uniform(1, per_token))?;
        let blocks = match self.num_gpu_blocks_override {
            Some(b) => whole("num_gpu_blocks_override", b, 2, u64::MAX)?,
            None => budget.num_gpu_blocks,
        };
        let pool_tokens = blocks.saturating_mul(page);
        let seqs = match (self.max_num_seqs, sglang) {
            (Some(s), _) => s,
            (None, true) if self.spec.is_some() => SGLANG_SPEC_MAX_RUNNING_REQUESTS,
            (None, true) => sglang_max_running_requests(pool_tokens, mml),
            (None, false) => TRTLLM_MAX_BATCH_SIZE,
        };
        let seqs = whole("max_num_seqs", seqs, 1, MAX_ENGINE_KNOB)?;
        // A hybrid model's running requests are at most its state slots (a third of them
        // with the radix cache on): SGLang's request pool is that small (`init_memory_pool`).
        let seqs = if terms.state_slots > 0 {
            let cap = sglang_state_running_cap(
                terms.state_slots,
                self.sglang_state.disable_radix_cache || self.spec.is_some(),
            );
            seqs.min(cap).max(1)
        } else {
            seqs
        };
        Ok(Resolved {
            max_num_seqs: seqs,
            max_num_batched_tokens: mnbt,
            block_size: page,
            max_model_len: mml,
            max_model_len_assumed,
            max_model_len_derived,
            num_gpu_blocks: blocks,
            groups: vec![BlockGroup {
                count: 1,
                window: None,
                state: false,
                block_size: None,
            }],
            prefix_hit: self.prefix_hit,
            frontend_overhead_s: self.frontend_overhead_ms / 1e3,
            frontend_per_token_s: self.frontend_per_token_us / 1e6,
            budget,
            pool: Some(terms),
            spec: self.spec,
            policy: if sglang {
                Policy::Sglang {
                    mixed_chunk: self.mixed_chunk,
                    max_prefill_tokens: whole(
                        "max_prefill_tokens",
                        self.max_prefill_tokens.unwrap_or(SGLANG_MAX_PREFILL_TOKENS),
                        1,
                        MAX_ENGINE_KNOB,
                    )?,
                    recv_interval: whole(
                        "scheduler_recv_interval",
                        self.scheduler_recv_interval.unwrap_or(1),
                        1,
                        MAX_ENGINE_KNOB,
                    )?,
                }
            } else {
                Policy::Trtllm {
                    chunked: self.chunked_prefill,
                    adp_timeout_iters: match self.adp_balance_timeout_iters {
                        Some(t) if self.dp > 1 => {
                            whole("adp_balance_timeout_iters", t, 1, MAX_ENGINE_KNOB)?
                        }
                        _ => 0,
                    },
                    adp_ranks: self.dp,
                    batch_wait: match self.batch_wait {
                        Some((iters, ratio)) if self.dp <= 1 => (
                            whole("batch_wait_timeout_iters", iters, 0, MAX_ENGINE_KNOB)?,
                            within(
                                "batch_wait_max_tokens_ratio",
                                ratio,
                                (0.0..=1.0).contains(&ratio),
                                "rng_sim_batch_wait_ratio",
                            )?,
                        ),
                        _ => (0, 0.0),
                    },
                }
            },
        })
    }

    /// SGLang's or TensorRT-LLM's pool on `gpu` at `(tp, tokens per step, page, max_model_len)`
    /// with the memory share `fraction`, and vLLM's budget inputs for the same GPU (whose
    /// total, weights, warm-up activations and non-torch memory are its terms).
    fn other_pool(
        &self,
        model: &ModelDesc,
        gpu: &Accelerator,
        (tp, mnbt, page, mml): (u64, u64, u64, u64),
        fraction: f64,
    ) -> Result<(EnginePool, VllmInputs), CalcError> {
        let sglang = self.engine == EngineKind::Sglang;
        let profile = self.kv_profile(model, tp, gpu)?;
        let hybrid = profile.state_per_seq > Bytes::ZERO;
        // SGLang's state pools serve hybrids only (its `mambaish_config` models all keep
        // attention layers; 0.5.9 has no pure Mamba model); TensorRT-LLM's are not modelled.
        let refused = match (hybrid, sglang) {
            (true, false) => Some("exp_sim_engine_recurrent"),
            (true, true) if !profile.has_attention() => Some("exp_sim_sglang_recurrent_only"),
            _ => None,
        };
        if let Some(why) = refused {
            return Err(CalcError::BadValue {
                key: "engine".into(),
                found: Phrase::verbatim(self.engine.name()),
                expected: Phrase::tr(why),
            });
        }
        let per_token = Bytes(profile.layers.iter().map(|l| l.bytes_per_token.0).sum());
        // The weights, the total and the activation peak of a `mnbt`-token pass as vLLM's
        // start finds them (the same checkpoint on the same GPU).
        let seqs = self
            .max_num_seqs
            .unwrap_or(DEFAULT_MAX_NUM_SEQS)
            .clamp(1, MAX_ENGINE_KNOB);
        let inp = self.start_inputs(model, gpu, (tp, mnbt, seqs, page, mml), fraction)?;
        let pool = if sglang {
            sglang_pool_bytes(inp.total_memory, inp.non_torch, inp.weights, fraction)
        } else {
            trtllm_pool_bytes(
                inp.total_memory,
                inp.weights,
                inp.activation_peak,
                inp.non_torch,
                fraction,
            )
        };
        let (pool, state_slots, state_per_seq, state) = if hybrid {
            let per_seq = self.sglang_state_per_seq(model, tp)?;
            let split = self.sglang_split(pool, per_seq)?;
            (split.kv, split.slots, per_seq, split.state)
        } else {
            (pool, 0, Bytes::ZERO, Bytes::ZERO)
        };
        let terms = EnginePool {
            engine: self.engine,
            fraction,
            total: inp.total_memory,
            non_torch: inp.non_torch,
            weights: inp.weights,
            activation: if sglang {
                Bytes::ZERO
            } else {
                inp.activation_peak
            },
            pool,
            per_token,
            state_slots,
            state_per_seq,
            state,
        };
        Ok((terms, inp))
    }

    /// One request's recurrent state on one of `tp` GPUs as SGLang holds it
    /// (`mamba_cache_per_req`, `configs/mamba_utils.py` `mamba2_state_dtype`): the conv state
    /// in bfloat16 (`SGLANG_MAMBA_CONV_DTYPE`'s default), the SSM state in
    /// `--mamba-ssm-dtype`, else the config's `mamba_ssm_dtype` (its own key, or under
    /// `text_config`; not vLLM's `mamba_ssm_cache_dtype`), else float32.
    fn sglang_state_per_seq(&self, model: &ModelDesc, tp: u64) -> Result<Bytes, CalcError> {
        let named = model.ledger.iter().any(|e| {
            e.field == "ssm_state_dtype"
                && matches!(&e.source, LedgerSource::Key(k) if k.ends_with("mamba_ssm_dtype"))
        });
        let ssm = match (self.sglang_state.mamba_ssm_dtype, model.ssm_state_dtype) {
            (Some(d), _) => d,
            (None, Some(d)) if named => d,
            _ => Dtype::Fp32,
        };
        state_bytes_in(model, Dtype::Bf16, ssm, tp)
    }

    /// SGLang's pool `pool` split between the attention KV cache and the state slots of
    /// `per_seq` bytes each (`sim::engines::sglang_hybrid_split`), with the flags checked:
    /// under speculative decoding SGLang turns the radix cache off and reserves the
    /// intermediate states of `--max-running-requests` (48 unless given) requests per draft
    /// token verified (`server_args.py` `_handle_mamba_radix_cache`, `handle_max_mamba_cache`).
    fn sglang_split(
        &self,
        pool: Bytes,
        per_seq: Bytes,
    ) -> Result<crate::sim::engines::HybridSplit, CalcError> {
        let mut flags = self.sglang_state;
        if let Some(n) = flags.max_mamba_cache_size {
            flags.max_mamba_cache_size =
                Some(whole("max_mamba_cache_size", n, 1, MAX_ENGINE_KNOB)?);
        }
        if let Some(r) = flags.mamba_full_memory_ratio {
            within(
                "mamba_full_memory_ratio",
                r,
                r > 0.0 && r <= 100.0,
                "rng_sim_mamba_ratio",
            )?;
        }
        let running = match (self.max_num_seqs, self.spec) {
            (Some(n), _) => Some(n),
            (None, Some(_)) => Some(SGLANG_SPEC_MAX_RUNNING_REQUESTS),
            (None, None) => None,
        };
        flags.disable_radix_cache |= self.spec.is_some();
        Ok(sglang_hybrid_split(
            pool,
            per_seq,
            &HybridSplitInputs {
                flags,
                max_running_requests: running,
                dp: if self.dp > 1 { self.dp } else { 1 },
                draft_tokens: self.spec.map(|s| s.k + 1),
            },
        ))
    }
}
