//! What a user chose: the model, the compared GPUs, the context, the budget rule, the
//! workload and the views' inputs, as plain data with its defaults and accepted ranges.

use super::view_inputs::ViewInputs;
use crate::base::dtype::Dtype;
use crate::base::i18n::Lang;
use crate::hardware::catalog::{CustomAccelerator, Link};
use serde::{Deserialize, Serialize};

/// Version of the query format written by [`Scenario::to_query`].
pub const QUERY_VERSION: u32 = 1;
/// Longest query (in bytes) that [`Scenario::share_query`] puts in a link.
pub const MAX_LINK_QUERY_BYTES: usize = 8 * 1024;
/// Longest query text [`Scenario::from_query`] reads at all (bytes); the rest is ignored.
pub const MAX_QUERY_BYTES: usize = 512 * 1024;
/// Most GPUs compared side by side.
pub const MAX_GPUS: usize = 4;
/// Largest pasted config accepted from a URL, after decoding (bytes).
pub const MAX_CFG_BYTES: usize = 256 * 1024;

/// The preset shown when nothing else is chosen (the chapter's worked example).
pub const DEFAULT_PRESET: &str = "llama-2-7b";
/// The GPUs shown when nothing else is chosen (the chapter's comparison).
pub const DEFAULT_GPUS: &[&str] = &["a10g", "l40s"];

/// Where the model comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum ModelSource {
    /// A built-in preset, by id (`core::presets`).
    Preset(String),
    /// A pasted or uploaded `config.json` / `model.safetensors.index.json` (untrusted text).
    Pasted(String),
    /// Quick mode: a parameter count and the weights' precision.
    Quick {
        /// Total parameters (count).
        params: u64,
        /// Precision of the weights.
        dtype: Dtype,
    },
}

/// One compared GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum GpuChoice {
    /// A catalog accelerator, by id.
    Catalog(String),
    /// A custom accelerator (validated when the report is computed).
    Custom(CustomAccelerator),
}

impl GpuChoice {
    /// A stable key for lists and test ids (`a10g`, `custom-0`, …); `index` is its position.
    pub fn key(&self, index: usize) -> String {
        match self {
            GpuChoice::Catalog(id) => id.clone(),
            GpuChoice::Custom(_) => format!("custom-{index}"),
        }
    }
}

/// How the memory left for the KV cache is computed.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BudgetRule {
    /// The textbook: capacity − weights (theoretical), minus activations and overhead (practical).
    #[default]
    Textbook,
    /// vLLM: capacity × gpu_memory_utilization − weights − activation peak − non-torch memory,
    /// rounded down to whole blocks.
    Vllm {
        /// Fraction of GPU memory vLLM may use (0.05–1).
        gpu_memory_utilization: f64,
        /// Tokens per KV block.
        block_size: u32,
    },
}

/// Inputs of the latency/throughput estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerfInputs {
    /// Prompt tokens per request.
    pub input_len: u64,
    /// Generated tokens per request.
    pub output_len: u64,
    /// Requests decoded together.
    pub batch: u64,
}

impl Default for PerfInputs {
    fn default() -> Self {
        PerfInputs {
            input_len: 1024,
            output_len: 256,
            batch: 1,
        }
    }
}

/// A widget shown alone in embed mode (`?embed=…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedWidget {
    /// Memory breakdown per GPU (does it fit?).
    Memory,
    /// KV-cache memory against tokens.
    Kv,
    /// Max concurrent requests against context length.
    Batch,
    /// Cost per request across GPUs.
    Cost,
    /// Roofline.
    Roofline,
    /// Latency estimates.
    Latency,
    /// Matmul arithmetic intensity.
    Matmul,
    /// Capacity planner.
    Planner,
}

impl EmbedWidget {
    /// Every widget.
    pub const ALL: &'static [EmbedWidget] = &[
        EmbedWidget::Memory,
        EmbedWidget::Kv,
        EmbedWidget::Batch,
        EmbedWidget::Cost,
        EmbedWidget::Roofline,
        EmbedWidget::Latency,
        EmbedWidget::Matmul,
        EmbedWidget::Planner,
    ];

    /// Stable id used in URLs.
    pub const fn id(self) -> &'static str {
        match self {
            EmbedWidget::Memory => "memory",
            EmbedWidget::Kv => "kv",
            EmbedWidget::Batch => "batch",
            EmbedWidget::Cost => "cost",
            EmbedWidget::Roofline => "roofline",
            EmbedWidget::Latency => "latency",
            EmbedWidget::Matmul => "matmul",
            EmbedWidget::Planner => "planner",
        }
    }

    /// From its id.
    pub fn from_id(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|w| w.id() == s)
    }
}

/// Full page or one embedded widget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", content = "widget", rename_all = "snake_case")]
pub enum ViewMode {
    /// The whole calculator.
    #[default]
    Full,
    /// One widget, no page chrome.
    Embed(EmbedWidget),
}

/// Everything the user chose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// The model.
    pub model: ModelSource,
    /// Compared GPUs (1 to [`MAX_GPUS`]); each replica is `tp` of them.
    pub gpus: Vec<GpuChoice>,
    /// Tensor-parallel degree: GPUs per replica.
    pub tp: u32,
    /// Link between the GPUs of a replica (the chip's own, or a textbook preset).
    pub interconnect: Link,
    /// Tokens per request (prompt + output) the KV cache must hold.
    pub context_len: u64,
    /// Concurrent requests to serve.
    pub concurrency: u64,
    /// Weight precision; `None` = the checkpoint's own.
    pub weight_dtype: Option<Dtype>,
    /// KV-cache precision; `None` = the model's compute precision.
    pub kv_dtype: Option<Dtype>,
    /// How the KV budget is computed.
    pub budget: BudgetRule,
    /// Inputs of the latency estimates.
    pub perf: PerfInputs,
    /// UI language fixed by the link; `None` = follow the browser.
    pub lang: Option<Lang>,
    /// Full page or an embedded widget.
    pub view: ViewMode,
    /// In embed mode, whether the widget shows its own input strip (`embed_inputs=0` hides it,
    /// for a course page that wants a fixed figure).
    #[serde(default = "yes")]
    pub embed_inputs: bool,
    /// Inputs of the analysis views (efficiencies, prices, matmul, planner); own URL keys.
    #[serde(default)]
    pub views: ViewInputs,
    /// Whether the serving engine loads the model's multi-token-prediction modules
    /// (speculative decoding with MTP; `mtp=1`). vLLM skips them otherwise.
    #[serde(default)]
    pub include_mtp: bool,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            model: ModelSource::Preset(DEFAULT_PRESET.to_string()),
            gpus: DEFAULT_GPUS
                .iter()
                .map(|g| GpuChoice::Catalog((*g).to_string()))
                .collect(),
            tp: 1,
            interconnect: Link::Own,
            context_len: 4096,
            concurrency: 16,
            weight_dtype: None,
            kv_dtype: None,
            budget: BudgetRule::Textbook,
            perf: PerfInputs::default(),
            lang: None,
            view: ViewMode::Full,
            embed_inputs: true,
            views: ViewInputs::default(),
            include_mtp: false,
        }
    }
}

fn yes() -> bool {
    true
}

/// Accepted ranges of the numeric inputs (inclusive), shared by the URL parser and the UI.
pub mod limits {
    /// Tokens per request.
    pub const CONTEXT_LEN: (u64, u64) = (1, 10_000_000);
    /// Concurrent requests.
    pub const CONCURRENCY: (u64, u64) = (1, 1_000_000);
    /// Tensor-parallel degree.
    pub const TP: (u64, u64) = (1, 1024);
    /// Quick-mode parameter count.
    pub const PARAMS: (u64, u64) = (1_000, 1_000_000_000_000_000);
    /// vLLM block size (tokens).
    pub const BLOCK_SIZE: (u64, u64) = (1, 1024);
    /// vLLM gpu_memory_utilization.
    pub const GMU: (f64, f64) = (0.05, 1.0);
    /// Prompt / output tokens.
    pub const PERF_LEN: (u64, u64) = (1, 10_000_000);
    /// Decode batch.
    pub const BATCH: (u64, u64) = (1, 1_000_000);
}

/// A custom accelerator with plausible default figures (the A10G's), for the form.
pub fn default_custom() -> CustomAccelerator {
    CustomAccelerator {
        name: "Custom".to_string(),
        memory_gib: 24.0,
        bandwidth_gbps: 600.0,
        bf16_tflops: 125.0,
        fp8_tflops: None,
        price_usd_per_hour: None,
        tdp_w: None,
    }
}
