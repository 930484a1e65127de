//! Prepared chart data: plain series computed from core results, ready to lay out.
//!
//! Every chart in the app draws one of these types and nothing else, so the drawing code
//! only lays out and the numbers are tested here, natively. Quantities keep their units
//! (`Bytes`, `FlopsPerSecond`, …); bare `f64`s carry the unit in their name.
//!
//! Sources: the textbook chapter (`WORKED_EXAMPLES.md` §2–§5): KV cache = KV per token ×
//! tokens × requests; max concurrent requests = floor(budget / KV per request); the roofline
//! attainable = min(peak, intensity × bandwidth); matmul intensity = MNK / (MK + KN + MN)
//! at 2 bytes per element.
//!
//! The charts' data lives in one file each: [`MemoryBars`] (memory_bars.rs), [`KvSeries`]
//! (kv.rs), [`BatchSeries`] (batch.rs), [`RooflineData`] (roofline.rs), the matmul explorer
//! (matmul.rs, on top of the roofline), [`LatencyThroughput`] (latency.rs) and [`CostBars`]
//! (cost.rs); this module re-exports them all.

mod batch;
mod cost;
mod kv;
mod latency;
mod matmul;
mod memory_bars;
mod roofline;

pub use crate::calc::roofline::{Bound, Matmul};
pub use batch::{batch_series, context_grid, max_requests, BatchLine, BatchPoint, BatchSeries};
pub use cost::{CostBar, CostBars, CostMetric};
pub use kv::{kv_bytes, kv_series, CapacityLine, GpuBudget, KvLine, KvSeries, OomPoint};
pub use latency::{batch_grid, lt_curve, LatencyThroughput, LtCurve, LtPoint};
pub use matmul::{MatmulPreset, MATMUL_PRESETS};
pub use memory_bars::{MemoryBar, MemoryBars};
pub use roofline::{
    model_roofline, roofline, Ceiling, PointKind, PointSpec, RooflineData, RooflineDetail,
    RooflineGpu, WorkPoint, CEILING_DTYPES,
};
