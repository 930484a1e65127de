//! KV-cache block accounting: the blocks a request needs, the prefix cache's share, preempting
//! the last running request, and taking blocks from the free pool.

use super::{Cached, Engine, Req, Stage};

impl Engine<'_> {
    /// Blocks a request of `tokens` tokens holds across the cache's groups, `new` of them
    /// computed this step.
    pub(super) fn blocks_for(&self, tokens: u64, new: u64) -> u64 {
        let bs = self.cfg.block_size;
        self.cfg
            .groups
            .iter()
            .map(|g| g.count.saturating_mul(g.blocks(tokens, new, bs)))
            .sum()
    }

    /// Blocks request `r` needs beyond those it holds to compute `k` more tokens.
    #[inline(always)]
    pub(super) fn blocks_needed(&self, r: &Req, k: u64) -> u64 {
        let tokens = r.computed + k;
        if self.uniform {
            // One full-attention group: only a token past the last block needs a new one.
            let have = r.blocks * self.cfg.block_size;
            return if tokens <= have {
                0
            } else {
                (tokens - have).div_ceil(self.cfg.block_size)
            };
        }
        self.blocks_for(tokens, k).saturating_sub(r.blocks)
    }

    /// Blocks (across the groups) holding the first `tokens` tokens of a request.
    #[inline(always)]
    pub(super) fn prefix_blocks(&self, tokens: u64) -> u64 {
        if self.uniform {
            tokens.div_ceil(self.cfg.block_size)
        } else {
            self.blocks_for(tokens, 0)
        }
    }

    pub(super) fn preempt_last(&mut self) -> Option<u32> {
        let v = self.running.pop()?;
        if let Some(r) = self.reqs.get(v as usize).copied() {
            // Its full blocks stay cached (vLLM hashes whole blocks only).
            let bs = self.cfg.block_size;
            let tokens = (r.computed / bs) * bs;
            let cached = self.prefix_blocks(tokens).min(r.blocks);
            let before = self.free_blocks;
            self.free_blocks += r.blocks;
            if cached > 0 {
                let run = self
                    .free_queue
                    .preempt(before, r.blocks - cached, cached, v);
                if let Some(c) = self.cached.get_mut(v as usize) {
                    *c = Cached {
                        blocks: cached,
                        tokens,
                        run,
                    };
                }
            } else {
                self.free_queue.release(r.blocks);
            }
            if let Some(r) = self.reqs.get_mut(v as usize) {
                r.blocks = 0;
                r.computed = 0;
                r.stage = Stage::Waiting;
            }
        }
        self.preemptions += 1;
        self.waiting.push_front(v);
        Some(v)
    }

    /// `n` blocks leave the free pool (evicting cached blocks from the queue's head).
    #[inline(always)]
    pub(super) fn allocate(&mut self, n: u64) {
        self.free_blocks -= n;
        if self.free_queue.active() && n > 0 {
            let (cached, uniform, bs) = (&mut self.cached, self.uniform, self.cfg.block_size);
            self.free_queue.allocate(n, |owner, left| {
                let Some(c) = cached.get_mut(owner as usize) else {
                    return false;
                };
                if uniform && left > 0 {
                    // A prefix of whole blocks survives.
                    c.blocks = left;
                    c.tokens = left * bs;
                    true
                } else {
                    // Under the hybrid allocator a hit needs the sliding groups' last window
                    // at its end, freed with the tail: an evicted tail leaves no usable hit.
                    *c = Cached::default();
                    false
                }
            });
        }
    }
}
