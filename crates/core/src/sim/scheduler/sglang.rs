//! SGLang's scheduler (`scheduler.py` `get_next_batch_to_run`, `schedule_policy.py`
//! `PrefillAdder`, v0.5.9; `sim::engines` gives the sources): each step is a prompt batch or
//! a decode batch, never both.
//!
//! 1. **A prompt batch when one can be formed**: the unfinished chunked prompt first (its
//!    next chunk), then waiting requests first come first served while fewer than
//!    `max_running_requests` run, the chunk budget (`--chunked-prefill-size`) lasts and the
//!    prompts' tokens stay below `--max-prefill-tokens` (a prompt reaching what is left of it
//!    joins only an empty batch); a
//!    request that does not fit whole is cut to whole pages and becomes the chunked prompt
//!    (one at a time). Admission reserves tokens: a newcomer needs its uncomputed prompt plus
//!    `min(output, 4096)` below what is free after the running requests' reservation (their
//!    remaining output, at most 4,096 each, times the new-token ratio); the first that does
//!    not fit stops admission until a running request finishes or is retracted (the
//!    scheduler's `batch_is_full` latch).
//! 2. **Else a decode batch** of every running request past its prompt. When the free pages
//!    cannot hold this step's tokens, the request with the fewest generated tokens (ties: the
//!    longest prompt) is retracted, its pages freed, to the back of the waiting queue (it
//!    computes its prompt and output again when readmitted), until they can; the last one
//!    stays. The ratio then becomes `(generated + 20 × n) / (outputs + 1)` over the requests
//!    left, at most 1; a decode step without retraction lowers it by `(0.7 − 0.098) / 600`,
//!    down to 0.098; an idle scheduler puts it back to 0.7.

use super::{Engine, Req, Stage};

/// SGLang's initial new-token ratio (`SGLANG_INIT_NEW_TOKEN_RATIO` 0.7 × conservativeness 1).
pub(crate) const SGLANG_INIT_NEW_TOKEN_RATIO: f64 = 0.7;

/// Its floor: the initial ratio × `SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR` 0.14.
const MIN_RATIO: f64 = SGLANG_INIT_NEW_TOKEN_RATIO * 0.14;

/// Its fall per decode step: (initial − floor) / `SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS` 600.
const RATIO_DECAY: f64 = (SGLANG_INIT_NEW_TOKEN_RATIO - MIN_RATIO) / 600.0;

/// Output tokens a request reserves at most (`SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION`).
const CLIP_MAX_NEW_TOKENS: u64 = 4096;

/// Decode steps' worth of tokens kept per request after a retraction
/// (`SGLANG_RETRACT_DECODE_STEPS`).
const RETRACT_DECODE_STEPS: u64 = 20;

impl Engine<'_> {
    /// SGLang's `SchedulerRecvSkipper` (`--scheduler-recv-interval N`): the latest entry time
    /// the scheduler has seen. After a decode step the counter grows by 1 and the scheduler
    /// takes new requests when it reaches `N`; after a prompt batch (weight 1,000) or with
    /// nothing running (its idle loop spins through `N` polls at once) it takes them now.
    pub(super) fn sglang_receive(&mut self, interval: u64, last_prefill: bool) -> f64 {
        if interval <= 1 || self.running.is_empty() || last_prefill {
            self.recv_count = 0;
            self.recv_at_s = self.now;
            return f64::INFINITY;
        }
        self.recv_count += 1;
        if self.recv_count >= interval {
            self.recv_count = 0;
            self.recv_at_s = self.now;
            return f64::INFINITY;
        }
        self.recv_at_s
    }

    /// One SGLang step: a prompt batch if one can be formed (with the running decodes in it
    /// under `mixed_chunk`), else a decode batch.
    pub(super) fn schedule_sglang(&mut self, cutoff_s: f64, mixed_chunk: bool, max_prefill: u64) {
        let decodes = if mixed_chunk {
            self.running
                .iter()
                .filter(|&&id| self.reqs.get(id as usize).is_some_and(Req::decoding))
                .count() as u64
        } else {
            0
        };
        self.sglang_prefill(cutoff_s, decodes, max_prefill);
        if self.n_scheduled == 0 || (mixed_chunk && decodes > 0) {
            self.sglang_decode();
        }
    }

    /// Tokens free for admission: the free pages' tokens less the running requests'
    /// reservation of their remaining output.
    fn sglang_room(&self) -> f64 {
        let page = self.cfg.block_size;
        let reserved: f64 = self
            .running
            .iter()
            .filter_map(|&id| self.reqs.get(id as usize))
            .filter(|r| !r.in_prompt())
            .map(|r| {
                r.output
                    .saturating_sub(r.generated)
                    .min(CLIP_MAX_NEW_TOKENS) as f64
            })
            .sum::<f64>()
            * self.new_token_ratio;
        (self.free_blocks * page) as f64 - reserved
    }

    /// The prompt batch, its token budget less `decodes` (the running decodes that ride in it
    /// under mixed chunks), its new prompt tokens within `max_prefill`.
    fn sglang_prefill(&mut self, cutoff_s: f64, decodes: u64, max_prefill: u64) {
        let page = self.cfg.block_size.max(1);
        let mut budget = self.cfg.max_num_batched_tokens.saturating_sub(decodes);
        let mut input = max_prefill.saturating_sub(decodes);
        let mut room = self.sglang_room();
        // The chunked prompt's next chunk.
        let chunked = self
            .running
            .iter()
            .copied()
            .find(|&id| self.reqs.get(id as usize).is_some_and(Req::in_prompt));
        if let Some(id) = chunked {
            if let Some(r) = self.reqs.get(id as usize).copied() {
                let left = r.tokens() - r.computed;
                let mut k = left.min(budget).min(room.max(0.0) as u64);
                if k < left {
                    k = (k / page) * page;
                }
                let need = self.blocks_needed(&r, k);
                if k > 0 && need <= self.free_blocks {
                    self.take(id, need, k);
                    budget -= k;
                    input = input.saturating_sub(k);
                    room -= k as f64;
                }
                if k < left {
                    return;
                }
            }
        }
        if self.batch_full {
            return;
        }
        while budget > 0 && (self.running.len() as u64) < self.cfg.max_num_seqs {
            let Some((id, r)) = self.peek_waiting(cutoff_s) else {
                break;
            };
            let extend = r.tokens().saturating_sub(r.computed);
            let reserve = r
                .output
                .saturating_sub(r.generated)
                .min(CLIP_MAX_NEW_TOKENS);
            if (extend + reserve) as f64 >= room {
                self.batch_full = true;
                break;
            }
            let paged = extend.div_ceil(page) * page;
            if paged >= input && self.n_scheduled > 0 {
                break;
            }
            let k = if extend <= budget {
                extend
            } else {
                (budget / page) * page
            };
            let need = self.blocks_needed(&r, k);
            if k == 0 || need > self.free_blocks {
                break;
            }
            self.admit(id, r);
            self.take(id, need, k);
            budget -= k;
            input = input.saturating_sub(paged);
            room -= (paged + reserve) as f64;
            if k < extend {
                break;
            }
        }
    }

    fn sglang_decode(&mut self) {
        let mut retracted = false;
        loop {
            let need: u64 = self
                .running
                .iter()
                .filter_map(|&id| self.reqs.get(id as usize))
                .filter(|r| r.decoding())
                .map(|r| self.blocks_needed(r, self.decode_len(r)))
                .sum();
            if need <= self.free_blocks || self.running.len() <= 1 {
                break;
            }
            retracted = true;
            self.retract_one();
        }
        if retracted {
            let (gen, out, n) = self
                .running
                .iter()
                .filter_map(|&id| self.reqs.get(id as usize))
                .fold((0u64, 0u64, 0u64), |(g, o, n), r| {
                    (g + r.generated, o + r.output, n + 1)
                });
            self.new_token_ratio =
                (((gen + RETRACT_DECODE_STEPS * n) as f64) / (out + 1) as f64).min(1.0);
            self.batch_full = false;
        } else {
            self.new_token_ratio = (self.new_token_ratio - RATIO_DECAY).max(MIN_RATIO);
        }
        for i in 0..self.running.len() {
            let Some(&id) = self.running.get(i) else {
                break;
            };
            let Some(r) = self.reqs.get(id as usize).copied() else {
                continue;
            };
            if !r.decoding() {
                continue;
            }
            let k = self.decode_len(&r);
            let need = self.blocks_needed(&r, k);
            if need > self.free_blocks {
                continue;
            }
            self.take(id, need, k);
        }
    }

    /// Retracts the running request with the fewest generated tokens (ties: the longest
    /// prompt) to the back of the waiting queue, its pages freed.
    fn retract_one(&mut self) {
        let victim = self
            .running
            .iter()
            .enumerate()
            .filter_map(|(i, &id)| self.reqs.get(id as usize).map(|r| (i, r)))
            .min_by(|(_, a), (_, b)| a.generated.cmp(&b.generated).then(b.input.cmp(&a.input)))
            .map(|(i, _)| i);
        let Some(i) = victim else {
            return;
        };
        let id = self.running.remove(i);
        if let Some(r) = self.reqs.get_mut(id as usize) {
            self.free_blocks += r.blocks;
            self.free_queue.release(r.blocks);
            *r = Req {
                blocks: 0,
                computed: 0,
                stage: Stage::Waiting,
                ..*r
            };
        }
        self.preemptions += 1;
        self.waiting.push_back(id);
    }
}
