//! A step's time (through the decode-only step cache) and its end: tokens sampled, requests
//! finished and their blocks freed.

use super::{Engine, Stage, StepCache, STEP_CACHE_MAX};
use crate::sim::spec::accepted_drafts;
use crate::sim::stats::Finished;

impl Engine<'_> {
    /// The scheduled step's time: from the cache for a decode-only step of a full-attention
    /// cache seen before, else from the step model (the decodes added as sums after the
    /// prefill chunks: the model sums each kind on its own, and a sum of integers is exact in
    /// an `f64`, so neither the order nor the grouping changes a bit).
    pub(super) fn step_time(&mut self) -> f64 {
        let key = (self.sum_decodes && !self.step_prefill && self.cfg.spec.is_none())
            .then_some((self.decode_count, self.decode_key_sum));
        if let Some(t) = key.and_then(|k| self.cache.map.get(&k)) {
            return *t;
        }
        if self.sum_decodes {
            self.steps_model
                .add_decodes(self.decode_count, self.decode_key_sum);
        }
        let mut t = self.steps_model.finish(self.step_tokens, self.step_sampled);
        if let Some(sp) = self.cfg.spec.filter(|_| self.spec_decodes > 0) {
            // The drafter's passes, one after the other, over the verifying requests.
            let layers = sp.method.draft_layers();
            if layers > 0.0 {
                t += sp.k as f64 * layers * self.steps_model.draft_pass_s(self.spec_decodes);
            }
        }
        if let Some(k) = key {
            if self.cache.map.len() >= STEP_CACHE_MAX {
                self.cache.map.clear();
            }
            self.cache.map.insert(k, t);
        }
        t
    }

    /// Gives the engine a cache of step times (a replica's, kept across its runs).
    pub fn set_cache(&mut self, cache: StepCache) {
        self.cache = cache;
    }

    /// Takes the engine's cache of step times back.
    pub fn take_cache(&mut self) -> StepCache {
        std::mem::take(&mut self.cache)
    }

    pub(super) fn on_step_end(&mut self) {
        let now = self.now;
        let mut finished = 0u64;
        for idx in 0..self.n_scheduled {
            let Some(&(id, k)) = self.scheduled.get(idx) else {
                break;
            };
            let Some(r) = self.reqs.get_mut(id as usize) else {
                continue;
            };
            if r.stage != Stage::Running {
                continue;
            }
            // A step verifying drafts keeps those accepted and one token of its own.
            let (gained, computed) = match self.cfg.spec {
                Some(sp) if k > 1 && r.decoding() => {
                    let g = 1 + accepted_drafts(id, r.generated, k - 1, &sp.rates);
                    (g, g)
                }
                _ => (1, k),
            };
            r.computed += computed;
            if r.computed < r.tokens() {
                continue;
            }
            // Sliding-window groups release the blocks that left the window.
            let keep = if self.uniform {
                r.blocks
            } else {
                self.cfg.groups.iter().fold(0u64, |acc, g| {
                    acc.saturating_add(g.count.saturating_mul(g.blocks(
                        r.computed,
                        0,
                        self.cfg.block_size,
                    )))
                })
            };
            if keep < r.blocks {
                let gone = r.blocks - keep;
                r.blocks = keep;
                self.free_blocks += gone;
                self.free_queue.release(gone);
            }
            r.generated += gained;
            let contiguous = r.last_s == self.step_start_s;
            let first = r.first_s.is_nan();
            let gap = now - r.last_s;
            if first {
                r.first_s = now;
            }
            r.last_s = now;
            let done = r.generated >= r.output;
            if done {
                if u64::from(id) < self.barrier {
                    self.warm_done += 1;
                }
                r.stage = Stage::Done;
                self.free_blocks += r.blocks;
                self.free_queue.release(r.blocks);
                r.blocks = 0;
                finished += 1;
            }
            if !first {
                self.collector.itl(r.measured, gap, contiguous);
            }
            if done {
                let t = self.times.get_mut(id as usize);
                let (send_s, frontend_s, scheduled_s) =
                    t.map_or((f64::NAN, f64::NAN, f64::NAN), |t| {
                        t.done_s = now;
                        let (send, front) = t.sent();
                        (send, front, t.scheduled_s)
                    });
                if let Some(o) = self.outbox.as_mut() {
                    o.push(id);
                }
                let f = Finished {
                    input: r.input,
                    output: r.output,
                    generated: r.generated,
                    send_s,
                    first_s: r.first_s,
                    done_s: now,
                    scheduled_s,
                    frontend_s,
                };
                self.collector.finish(r.measured, &f);
            }
        }
        self.collector.flush_step(now - self.step_start_s);
        if finished > 0 {
            self.finished += finished;
            self.batch_full = false;
            let reqs = &self.reqs;
            self.running.retain(|&id| {
                reqs.get(id as usize)
                    .is_some_and(|r| r.stage != Stage::Done)
            });
            for _ in 0..finished {
                self.in_flight = self.in_flight.saturating_sub(1);
                if let Some(next) = self.client_queue.pop_front() {
                    self.client_sends += 1;
                    self.send(next);
                }
            }
            if self.barrier > 0 && self.warm_done >= self.barrier {
                // The warm-up has drained: the measured requests start, as many at once as
                // the clients allow.
                self.barrier = 0;
                while let Some(i) = self.held.pop_front() {
                    self.offer(i);
                }
            }
        }
        self.busy = false;
        self.last_end_s = now;
        if !self.running.is_empty() || !self.waiting.is_empty() {
            self.wake();
        }
    }
}
