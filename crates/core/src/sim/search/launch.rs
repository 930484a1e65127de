//! The commands that launch a searched configuration, in each engine's own spelling.
//!
//! Sources of the flags (the engines' documentation, read 2026-12):
//! - vLLM: `vllm serve` with `--tensor-parallel-size`, `--pipeline-parallel-size`,
//!   `--data-parallel-size`, `--enable-expert-parallel`,
//!   `--speculative-config '{"method": "mtp" | "eagle3" | "ngram", "num_speculative_tokens": k}'`
//!   (docs.vllm.ai, "Speculative Decoding"); disaggregated, each worker with
//!   `--kv-transfer-config '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'` behind a
//!   proxy that sends the prompt to a prefill worker and the decode to a decode worker (vLLM's
//!   disaggregated-serving examples; NVIDIA Dynamo and llm-d do the routing in production).
//! - SGLang: `python -m sglang.launch_server --model-path M --tp N --dp N
//!   --enable-dp-attention --ep-size N`; MTP as
//!   `--speculative-algorithm EAGLE --speculative-num-steps k --speculative-eagle-topk 1
//!   --speculative-num-draft-tokens k+1` (its DeepSeek guide); disaggregated with
//!   `--disaggregation-mode prefill|decode --disaggregation-transfer-backend nixl` and
//!   `python -m sglang_router.launch_router --pd-disaggregation --prefill URL --decode URL`
//!   (docs.sglang.io, "PD Disaggregation").
//! - TensorRT-LLM: `trtllm-serve M --tp_size N --pp_size N --ep_size N
//!   --extra_llm_api_options FILE`, the file holding `enable_attention_dp: true` and
//!   `speculative_config: {decoding_type: MTP, num_nextn_predict_layers: k}`; disaggregated,
//!   `trtllm-serve disaggregated -c FILE` over context and generation servers each with
//!   `cache_transceiver_config` (nvidia.github.io/TensorRT-LLM, "Disaggregated Serving").
//!
//! The engines' batch caps are left at their defaults, as the simulations ran them.

use super::Layout;
use crate::sim::engines::EngineKind;
use crate::sim::parallel::Parallel;
use crate::sim::spec::{SpecConfig, SpecMethod};

fn vllm_spec(s: &SpecConfig) -> String {
    let method = match s.method {
        SpecMethod::Mtp => "mtp",
        SpecMethod::Eagle3 => "eagle3",
        SpecMethod::Ngram => "ngram",
    };
    format!(
        " --speculative-config '{{\"method\": \"{method}\", \"num_speculative_tokens\": {}}}'",
        s.k
    )
}

fn sglang_spec(s: &SpecConfig) -> String {
    match s.method {
        SpecMethod::Ngram => format!(
            " --speculative-algorithm NGRAM --speculative-num-draft-tokens {}",
            s.k + 1
        ),
        SpecMethod::Mtp | SpecMethod::Eagle3 => format!(
            " --speculative-algorithm {} --speculative-num-steps {} --speculative-eagle-topk 1 \
             --speculative-num-draft-tokens {}",
            if s.method == SpecMethod::Mtp {
                "EAGLE"
            } else {
                "EAGLE3"
            },
            s.k,
            s.k + 1
        ),
    }
}

/// The TensorRT-LLM options file's lines for `p` and `spec` (without the cache transceiver).
fn trtllm_options(p: &Parallel, spec: Option<&SpecConfig>) -> Vec<String> {
    let mut o = Vec::new();
    if p.dp > 1 {
        o.push("enable_attention_dp: true".to_string());
    }
    if let Some(s) = spec {
        match s.method {
            SpecMethod::Mtp => o.push(format!(
                "speculative_config: {{decoding_type: MTP, num_nextn_predict_layers: {}}}",
                s.k
            )),
            SpecMethod::Eagle3 => o.push(format!(
                "speculative_config: {{decoding_type: Eagle3, max_draft_len: {}}}",
                s.k
            )),
            SpecMethod::Ngram => o.push(format!(
                "speculative_config: {{decoding_type: NGram, max_draft_len: {}}}",
                s.k
            )),
        }
    }
    o
}

/// One worker's command.
fn worker(
    engine: EngineKind,
    model: &str,
    p: &Parallel,
    spec: Option<&SpecConfig>,
    role: Option<&str>,
) -> String {
    let flags = p.launch_flags(engine).join(" ");
    match engine {
        EngineKind::Vllm => {
            let mut c = format!("vllm serve {model} {flags}");
            if let Some(s) = spec {
                c += &vllm_spec(s);
            }
            if role.is_some() {
                c += " --kv-transfer-config '{\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}'";
            }
            c
        }
        EngineKind::Sglang => {
            let mut c = format!("python -m sglang.launch_server --model-path {model} {flags}");
            if let Some(s) = spec {
                c += &sglang_spec(s);
            }
            if let Some(r) = role {
                c += &format!(" --disaggregation-mode {r} --disaggregation-transfer-backend nixl");
            }
            c
        }
        EngineKind::Trtllm => {
            let mut c = format!("trtllm-serve {model} {flags}");
            let mut opts = trtllm_options(p, spec);
            if role.is_some() {
                opts.push("cache_transceiver_config: {backend: DEFAULT}".into());
            }
            if !opts.is_empty() {
                let file = match role {
                    Some(r) => format!("{r}.yaml"),
                    None => "extra.yaml".into(),
                };
                c += &format!(
                    " --extra_llm_api_options {file}   # {file}: {}",
                    opts.join("; ")
                );
            }
            c
        }
    }
}

/// The commands of `layout` under `engine` for `model` (a Hugging Face id or a path), with
/// `spec`'s drafts: for a disaggregated layout each line a role, how many workers run it, and
/// the command.
pub fn commands(
    engine: EngineKind,
    model: &str,
    layout: &Layout,
    spec: Option<&SpecConfig>,
) -> Vec<String> {
    match layout {
        Layout::Aggregated { par } => vec![worker(engine, model, par, spec, None)],
        Layout::Disaggregated {
            prefill,
            decode,
            prefill_workers,
            decode_workers,
            ..
        } => {
            let pre = worker(engine, model, prefill, None, Some("prefill"));
            let dec = worker(engine, model, decode, spec, Some("decode"));
            let router = match engine {
                EngineKind::Vllm => "a KV-aware proxy (NVIDIA Dynamo or llm-d) in front of both pools".to_string(),
                EngineKind::Sglang => "python -m sglang_router.launch_router --pd-disaggregation --prefill http://PREFILL:30000 --decode http://DECODE:30000".to_string(),
                EngineKind::Trtllm => "trtllm-serve disaggregated -c disagg.yaml   # disagg.yaml: context_servers and generation_servers with their URLs".to_string(),
            };
            vec![
                format!("prefill, {prefill_workers} worker(s): {pre}"),
                format!("decode, {decode_workers} worker(s): {dec}"),
                format!("router: {router}"),
            ]
        }
    }
}
