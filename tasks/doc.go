// Package tasks tunes many workloads as one: a tasks file lists them with
// their weights, and a scheduler decides which of them the next batch of
// measurements goes to, so that the trials of a run lower the weighted
// total latency Σ weight·best of the whole list (a model's layer, say)
// as fast as they can.
//
// A Scheduler sees the state of every task (Status: weight, op, FLOPs, the
// best latency after each of its batches) and names the task of the next
// batch. It never measures: tune.RunTasks drives the tasks, a batch at a
// time, and tune's simulation replays recorded landscapes through the same
// schedulers. Schedulers are chosen by name (Lookup, Names), like search
// strategies.
//
// Every scheduler starts with a warm-up round: one batch per task, in the
// order of the file, so that each has a best and a slope. Then:
//
//   - round-robin gives the next batch to the task with the fewest batches,
//     the first in file order among equals;
//
//   - gradient gives it to the task with the largest expected reduction of
//     the weighted total per batch, the rule of Ansor's task scheduler
//     (Zheng et al., OSDI 2020, §6). For task i with weight wᵢ, best
//     latency gᵢ after tᵢ batches and FLOPs Cᵢ, the expected reduction is
//
//     wᵢ · (α·backward + (1−α)·forward)
//
//     backward = (gᵢ(tᵢ−Δ) − gᵢ(tᵢ)) / Δ is its recent improvement: the
//     slope of its best over its last Δ = 3 batches (0 before it has
//     had Δ+1). forward = gᵢ − min(gᵢ − gᵢ/tᵢ, β·Cᵢ/Vᵢ) is the gain still
//     in sight: the average improvement per batch so far (optimistically,
//     as if the best could still fall by gᵢ/tᵢ), or, when tasks of the
//     same op run much faster per FLOP, the gap to β times the latency
//     the best of them (Vᵢ, the highest FLOPs per nanosecond among the
//     op's tasks, itself included) would give this task. α = 0.2 and
//     β = 2, as in Ansor. The largest reduction wins; ties go to the task
//     with the fewest batches, then to the first in file order.
//
// A task that has no best yet (every candidate failed) is retried first,
// for up to Δ batches, and then set aside: it cannot lower the total.
// A task whose space is exhausted is never chosen again.
package tasks
