//! Memory bars: one GPU's memory split into weights, KV cache, activations, overhead and
//! what is free or over.

use crate::base::units::Bytes;
use serde::{Deserialize, Serialize};

/// One GPU's memory, split into what occupies it (all in bytes, per GPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryBar {
    /// GPU display name (untrusted text: render as text only).
    pub gpu: String,
    /// Model weights held by this GPU.
    pub weights: Bytes,
    /// KV cache for the chosen requests.
    pub kv: Bytes,
    /// Activations (intermediate tensors) at peak.
    pub activations: Bytes,
    /// Runtime overhead (CUDA context, allocator, graphs).
    pub overhead: Bytes,
    /// Free memory left: capacity − used, zero when it does not fit.
    pub free: Bytes,
    /// Memory needed beyond capacity: used − capacity, zero when it fits.
    pub over: Bytes,
    /// Usable capacity of the GPU.
    pub capacity: Bytes,
}

impl MemoryBar {
    /// Builds a bar; `free` and `over` are derived so that
    /// weights + kv + activations + overhead + free − over = capacity.
    pub fn new(
        gpu: impl Into<String>,
        capacity: Bytes,
        weights: Bytes,
        kv: Bytes,
        activations: Bytes,
        overhead: Bytes,
    ) -> MemoryBar {
        let used = weights + kv + activations + overhead;
        MemoryBar {
            gpu: gpu.into(),
            weights,
            kv,
            activations,
            overhead,
            free: capacity.saturating_sub(used),
            over: used.saturating_sub(capacity),
            capacity,
        }
    }

    /// Weights + KV + activations + overhead.
    pub fn used(&self) -> Bytes {
        self.weights + self.kv + self.activations + self.overhead
    }

    /// Whether everything fits in the capacity.
    pub fn fits(&self) -> bool {
        self.used() <= self.capacity
    }
}

/// The "does it fit?" chart: one stacked bar per GPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryBars {
    /// One bar per selected GPU, in selection order.
    pub bars: Vec<MemoryBar>,
}

impl MemoryBars {
    /// The largest of capacities and used totals: the top of the value axis.
    pub fn max_bytes(&self) -> Bytes {
        self.bars
            .iter()
            .map(|b| b.capacity.max(b.used()))
            .max()
            .unwrap_or(Bytes::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_bar_parts_add_up() {
        let b = MemoryBar::new("x", Bytes(100), Bytes(50), Bytes(20), Bytes(5), Bytes(5));
        assert_eq!(b.free, Bytes(20));
        assert_eq!(b.over, Bytes(0));
        assert!(b.fits());
        let o = MemoryBar::new("x", Bytes(100), Bytes(80), Bytes(40), Bytes(0), Bytes(0));
        assert_eq!(o.free, Bytes(0));
        assert_eq!(o.over, Bytes(20));
        assert!(!o.fits());
        assert_eq!(o.used().0 - o.over.0, o.capacity.0);
    }
}
