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
// order of the file, so that each has a best. Then:
//
//   - gradient (the default) gives the next batch to the task with the
//     largest expected reduction of the weighted total. For task i with
//     weight wᵢ, best latency gᵢ and FLOPs Cᵢ, that is
//
//     wᵢ · max(eᵢ, gᵢ − β·Cᵢ/Vᵢ)
//
//     eᵢ is the improvement its next batch is expected to bring: an
//     exponentially weighted average of the improvements of its best per
//     batch, the latest weighing 1 − Memory = 0.7, its warm-up batch
//     counting as an improvement by its whole best. So after the warm-up
//     the tasks get a second batch in the order of their weighted latency
//     (as under Ansor's rule), and each batch that finds nothing better
//     cuts a task's eᵢ to 0.3 of what it was, so a task whose best stopped
//     moving soon yields to the others, however heavy. gᵢ − β·Cᵢ/Vᵢ is the
//     gap to similar tasks, as in Ansor: when tasks of the same op run much
//     faster per FLOP, β = 2 times the latency the best of them (Vᵢ, the
//     highest FLOPs per nanosecond among the op's tasks, itself included)
//     would give this task.
//
//   - round-robin gives the next batch to the task with the fewest batches,
//     the first in file order among equals;
//
//   - ansor is the rule of Ansor's task scheduler (Zheng et al., OSDI 2020,
//     §6), kept to compare with: the expected reduction is
//
//     wᵢ · (α·backward + (1−α)·forward)
//
//     backward = (gᵢ(tᵢ−Δ) − gᵢ(tᵢ)) / Δ is its recent improvement: the
//     slope of its best over its last Δ = 3 batches (0 before it has had
//     Δ+1). forward = gᵢ − min(gᵢ − gᵢ/tᵢ, β·Cᵢ/Vᵢ) is the gain still in
//     sight after tᵢ batches: the average improvement per batch so far
//     (optimistically, as if the best could still fall by gᵢ/tᵢ), or the
//     gap to similar tasks as above. α = 0.2 and β = 2, as in Ansor. Its
//     forward term falls only as 1/tᵢ however long a task's best has not
//     moved, so a heavy task that converged keeps its batches while light
//     ones stay at their warm-up best (docs/benchmarks.md measures it).
//
// Under both gradient rules the largest reduction wins; ties go to the
// task with the fewest batches, then to the first in file order.
//
// A task that has no best yet (every candidate failed) is retried first,
// for up to Δ batches, and then set aside: it cannot lower the total.
// A task whose space is exhausted is never chosen again.
package tasks
