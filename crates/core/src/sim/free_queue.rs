//! vLLM V1's free block queue, as far as the prefix cache of a preempted request needs it.
//!
//! vLLM V1 keeps prefix caching on by default (`enable_prefix_caching`), and its block pool
//! (`v1/core/block_pool.py`) does not forget a freed block's contents: a freed block goes to
//! the tail of the free block queue with its hash, and stays a cache entry until an
//! allocation pops it from the head (`_maybe_evict_cached_block`). A request's blocks are
//! freed in reverse order (`KVCacheManager.free`: the last block first), so its last blocks
//! are evicted first and what survives is a prefix. A preempted request (`num_computed_tokens`
//! reset to 0) that is readmitted finds that prefix (`get_computed_blocks`, at most
//! `num_tokens − 1` tokens, whole blocks): it takes those blocks back out of the free queue
//! and computes only the rest.
//!
//! The queue is kept as runs of blocks ([`FreeQueue`]): a run of blocks no request will hit
//! (the pool's never-used blocks, a finished request's, the unhashed tail of a preempted one:
//! only the prompt they held could hit them, and the simulator's prompts are distinct) and
//! one run per preempted request holding its cached prefix. An allocation pops blocks from
//! the head, shrinking a preempted request's run from its end as vLLM's LRU eviction does.
//! While no preempted request holds cached blocks the queue is not kept at all (every free
//! block is alike), so a run without preemption does no work here. Work is per allocation,
//! release and preemption, in runs touched (amortised constant); nothing is allocated per
//! token.

use std::collections::VecDeque;

/// No owner: blocks no request will hit.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Run {
    owner: u32,
    count: u64,
}

/// The free block queue, by runs (module docs). Its runs sum to the engine's free blocks
/// while [`FreeQueue::active`]; otherwise it holds nothing and every free block is plain.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreeQueue {
    runs: VecDeque<Run>,
    /// Absolute id of `runs[0]` (ids never repeat, so an owner's id stays valid).
    base: u64,
    /// Runs with an owner.
    owned: u64,
}

impl FreeQueue {
    /// Some preempted request holds cached blocks in the queue.
    #[inline(always)]
    pub fn active(&self) -> bool {
        self.owned > 0
    }

    fn push_plain(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        match self.runs.back_mut() {
            Some(last) if last.owner == NONE => last.count += n,
            _ => self.runs.push_back(Run {
                owner: NONE,
                count: n,
            }),
        }
    }

    fn deactivate_if_idle(&mut self) {
        if self.owned == 0 {
            self.base += self.runs.len() as u64;
            self.runs.clear();
        }
    }

    /// `n` blocks no request will hit are freed (appended at the tail).
    #[inline(always)]
    pub fn release(&mut self, n: u64) {
        if self.active() {
            self.push_plain(n);
        }
    }

    /// A preempted request `owner` frees `plain` blocks without a useful hash and then its
    /// `cached` prefix blocks (freed last in vLLM's reverse order: at the tail, evicted
    /// last); `free_before` is the number of free blocks before these. Returns the id of the
    /// request's run.
    pub fn preempt(&mut self, free_before: u64, plain: u64, cached: u64, owner: u32) -> u64 {
        if !self.active() {
            self.push_plain(free_before);
        }
        self.push_plain(plain);
        self.runs.push_back(Run {
            owner,
            count: cached,
        });
        self.owned += 1;
        self.base + self.runs.len() as u64 - 1
    }

    /// `n` blocks are allocated from the head. `evicted(owner, left)` is called for each
    /// preempted request whose run lost blocks, with the blocks it still has; when it
    /// returns false the run's remaining blocks no longer count as that request's cache.
    pub fn allocate(&mut self, mut n: u64, mut evicted: impl FnMut(u32, u64) -> bool) {
        if !self.active() {
            return;
        }
        while n > 0 {
            let Some(head) = self.runs.front_mut() else {
                break;
            };
            let take = n.min(head.count);
            head.count -= take;
            n -= take;
            let (owner, left) = (head.owner, head.count);
            if owner != NONE && take > 0 && !evicted(owner, left) {
                head.owner = NONE;
                self.owned -= 1;
            }
            if head.count == 0 {
                if head.owner != NONE {
                    self.owned -= 1;
                }
                self.runs.pop_front();
                self.base += 1;
            }
        }
        self.deactivate_if_idle();
    }

    /// The request owning run `id` is readmitted and takes `hit` of its blocks back out of
    /// the queue; the rest of its run stays free, as blocks no request will hit.
    pub fn reclaim(&mut self, id: u64, hit: u64) {
        let at = id
            .checked_sub(self.base)
            .and_then(|i| usize::try_from(i).ok());
        if let Some(run) = at.and_then(|i| self.runs.get_mut(i)) {
            if run.owner != NONE {
                run.owner = NONE;
                run.count -= hit.min(run.count);
                self.owned -= 1;
            }
        }
        self.deactivate_if_idle();
    }

    /// Blocks in the queue (tests: equals the engine's free blocks while active).
    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.runs.iter().map(|r| r.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head is evicted first: plain blocks, then a preempted request's run from its end.
    #[test]
    fn eviction_takes_plain_blocks_first_then_a_prefix_from_its_end() {
        let mut q = FreeQueue::default();
        assert!(!q.active());
        let id = q.preempt(10, 1, 20, 7);
        assert!(q.active());
        assert_eq!(q.total(), 31);
        let mut seen = Vec::new();
        q.allocate(8, |o, l| {
            seen.push((o, l));
            true
        });
        assert!(seen.is_empty(), "only plain blocks were taken");
        q.allocate(5, |o, l| {
            seen.push((o, l));
            true
        });
        // The 3 plain blocks left go first, then 2 of the run's 20 (from its end).
        assert_eq!(seen, vec![(7, 18)]);
        q.release(4);
        assert_eq!(q.total(), 31 - 13 + 4);
        q.reclaim(id, 15);
        assert!(!q.active(), "no owner left: the queue is not kept");
    }

    /// A run whose owner gives it up turns plain; a run consumed entirely reports 0.
    #[test]
    fn a_run_given_up_or_consumed_leaves_no_owner() {
        let mut q = FreeQueue::default();
        q.preempt(0, 0, 4, 1);
        q.preempt(0, 0, 4, 2);
        let mut seen = Vec::new();
        q.allocate(6, |o, l| {
            seen.push((o, l));
            o != 2
        });
        assert_eq!(seen, vec![(1, 0), (2, 2)]);
        assert!(!q.active());
    }
}
