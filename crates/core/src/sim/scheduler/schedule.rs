//! One step's scheduling, as vLLM V1's `schedule()`: the running requests first, then the
//! waiting ones, within the token budget and the free blocks; SGLang's and TensorRT-LLM's
//! policies are in `sglang.rs` and `trtllm.rs`.

use super::sglang::SGLANG_INIT_NEW_TOKEN_RATIO;
use super::{Cached, Engine, Kind, Req, Stage};
use crate::base::error::CalcError;
use crate::sim::engines::Policy;

impl Engine<'_> {
    /// Step 1: running requests, preempting from the back when blocks run out. Returns the
    /// token budget left and whether anything was preempted.
    pub(super) fn schedule_running(&mut self, mut budget: u64) -> (u64, bool) {
        let mut preempted = false;
        let mut i = 0;
        while i < self.running.len() && budget > 0 {
            let Some(&id) = self.running.get(i) else {
                break;
            };
            let Some(r) = self.reqs.get(id as usize) else {
                break;
            };
            let want = if r.decoding() {
                self.decode_len(r)
            } else {
                r.tokens().saturating_sub(r.computed)
            };
            let k = want.min(budget);
            if k == 0 {
                i += 1;
                continue;
            }
            let need = self.blocks_needed(r, k);
            let mut fits = need <= self.free_blocks;
            while !fits {
                preempted = true;
                match self.preempt_last() {
                    Some(v) if v == id => break,
                    Some(_) => fits = need <= self.free_blocks,
                    None => break,
                }
            }
            if !fits {
                break;
            }
            self.take(id, need, k);
            budget -= k;
            i += 1;
        }
        (budget, preempted)
    }

    /// Schedules `k` tokens of request `id`, which takes `blocks` more blocks, and adds them
    /// to the step's time (the request's state is final for this step once taken: a request
    /// scheduled earlier in a step is never preempted later in it).
    #[inline(always)]
    pub(super) fn take(&mut self, id: u32, blocks: u64, k: u64) {
        self.allocate(blocks);
        if let Some(r) = self.reqs.get_mut(id as usize) {
            r.blocks += blocks;
            let r = *r;
            self.step_tokens += k;
            if r.decoding() {
                // Logits at every position verified (1 without speculative decoding).
                self.step_sampled += k;
                if k > 1 {
                    self.spec_decodes += 1;
                }
                if self.sum_decodes {
                    self.decode_count += 1;
                    self.decode_key_sum += r.computed + 1;
                } else {
                    self.steps_model.add_decode(r.computed + 1);
                }
            } else {
                if r.computed + k >= r.tokens() {
                    self.step_sampled += 1;
                }
                self.step_prefill = true;
                self.steps_model.add_prefill(r.computed, k);
            }
        }
        match self.scheduled.get_mut(self.n_scheduled) {
            Some(slot) => *slot = (id, k),
            None => self.scheduled.push((id, k)),
        }
        self.n_scheduled += 1;
    }

    /// Step 2: admit waiting requests while budget, seats and blocks last, and (under
    /// asynchronous scheduling) only those that entered by `cutoff_s`, when this step was
    /// scheduled in vLLM ([`Engine::pipelined`]).
    pub(super) fn schedule_waiting(&mut self, mut budget: u64, cutoff_s: f64) {
        while budget > 0 && (self.running.len() as u64) < self.cfg.max_num_seqs {
            let Some((id, mut r)) = self.peek_waiting(cutoff_s) else {
                break;
            };
            let bs = self.cfg.block_size;
            let c = self.cached.get(id as usize).copied().unwrap_or_default();
            let mut hit_blocks = 0;
            if c.blocks > 0 {
                // Its own blocks still cached since its preemption, whole blocks, at least
                // one token left to compute.
                let tokens = c.tokens.min((r.tokens().saturating_sub(1) / bs) * bs);
                hit_blocks = self.prefix_blocks(tokens).min(c.blocks);
                r.computed = tokens;
                r.blocks = hit_blocks;
            }
            let k = r.tokens().saturating_sub(r.computed).min(budget);
            let need = self.blocks_needed(&r, k);
            if need + hit_blocks > self.free_blocks || k == 0 {
                break;
            }
            if c.blocks > 0 {
                self.free_queue.reclaim(c.run, hit_blocks);
                self.free_blocks -= hit_blocks;
                if let Some(slot) = self.cached.get_mut(id as usize) {
                    *slot = Cached::default();
                }
            }
            self.admit(id, r);
            self.take(id, need, k);
            budget -= k;
        }
    }

    /// The waiting queue's first request, if it entered by `cutoff_s`, as it would be
    /// admitted: on its first admission a request skips the prefix-cache hit share of its
    /// prompt (whole blocks, at least one token left to compute).
    #[inline(always)]
    pub(super) fn peek_waiting(&self, cutoff_s: f64) -> Option<(u32, Req)> {
        let &id = self.waiting.front()?;
        if self.entered_after(id, cutoff_s) {
            return None;
        }
        let mut r = self.reqs.get(id as usize).copied()?;
        if !r.hit_applied {
            r.hit_applied = true;
            let bs = self.cfg.block_size;
            let hit = ((r.input as f64 * self.cfg.prefix_hit) as u64 / bs) * bs;
            r.computed = hit.min(r.input.saturating_sub(1));
        }
        Some((id, r))
    }

    /// Moves waiting request `id` (the queue's first), updated as `r`, to the running ones.
    #[inline(always)]
    pub(super) fn admit(&mut self, id: u32, mut r: Req) {
        self.waiting.pop_front();
        r.stage = Stage::Running;
        if let Some(t) = self.times.get_mut(id as usize) {
            if t.scheduled_s.is_nan() {
                t.scheduled_s = self.now;
            }
        }
        if let Some(slot) = self.reqs.get_mut(id as usize) {
            *slot = r;
        }
        self.running.push(id);
    }

    /// Whether the waiting queue's first request entered after `cutoff_s` (asynchronous
    /// scheduling: it is not seen by this step).
    #[inline(always)]
    pub(super) fn entered_after(&self, id: u32, cutoff_s: f64) -> bool {
        self.times
            .get(id as usize)
            .is_some_and(|t| t.entered_s > cutoff_s)
    }

    pub(super) fn on_step_start(&mut self) -> Result<(), CalcError> {
        self.n_scheduled = 0;
        let last_prefill = self.step_prefill;
        self.steps_model.begin();
        (self.step_tokens, self.step_sampled) = (0, 0);
        (self.decode_count, self.decode_key_sum) = (0, 0);
        self.step_prefill = false;
        self.spec_decodes = 0;
        // Under asynchronous scheduling a step that follows another back to back, with
        // requests still running, was scheduled when that one started.
        let cutoff_s = if self.pipelined && self.now == self.last_end_s && !self.running.is_empty()
        {
            self.step_start_s
        } else {
            f64::INFINITY
        };
        match self.cfg.policy {
            Policy::Vllm => {
                let (budget, preempted) = self.schedule_running(self.cfg.max_num_batched_tokens);
                if !preempted {
                    self.schedule_waiting(budget, cutoff_s);
                }
            }
            Policy::Sglang {
                mixed_chunk,
                max_prefill_tokens,
                recv_interval,
            } => {
                let seen = self.sglang_receive(recv_interval, last_prefill);
                self.schedule_sglang(cutoff_s.min(seen), mixed_chunk, max_prefill_tokens)
            }
            Policy::Trtllm {
                chunked,
                adp_timeout_iters,
                adp_ranks,
                batch_wait,
            } => self.schedule_trtllm(
                cutoff_s,
                chunked,
                (adp_timeout_iters, adp_ranks),
                batch_wait,
            ),
        }
        if self.n_scheduled == 0 {
            // An idle SGLang scheduler resets its new-token ratio.
            self.new_token_ratio = SGLANG_INIT_NEW_TOKEN_RATIO;
            self.busy = false;
            // Work left that cannot be scheduled with nothing running cannot progress.
            self.stalled = !self.waiting.is_empty() && self.running.is_empty();
            return Ok(());
        }
        let dt = self.step_time();
        self.steps += 1;
        self.busy_s += dt;
        self.step_start_s = self.now;
        let used = self.cfg.usable_blocks() - self.free_blocks;
        self.series.record(
            self.now,
            self.running.len() as u64,
            self.waiting.len() as u64,
            used as f64 / self.cfg.usable_blocks().max(1) as f64,
        );
        self.collector.step(dt, self.running.len() as u64, used);
        self.push(self.now + dt, Kind::StepEnd);
        Ok(())
    }
}
