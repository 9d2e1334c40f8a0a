/// Which item of a batch runs next: a first-in-first-out queue of item
/// indices per backend instance (a slot), and how many of each slot's items
/// are drawing. Taking the next item looks at the head of each slot's queue
/// once, so picking, releasing and counting cost the same whatever the
/// batch's size: nothing scans or copies the list of items.
package struct BatchScheduler: Sendable {
    private var queues: [[Int]]
    /// Where each queue's next item is: taken items stay behind it, so a take
    /// moves nothing.
    private var heads: [Int]
    private var running: [Int]
    private let limits: [Int]

    /// The work done so far, in steps of constant cost: one per item queued,
    /// per slot looked at while choosing, per release and per `count()` (the
    /// runner counts each turn of its loop and each result it records). A
    /// batch that costs O(1) per item does a number of steps that grows
    /// linearly with its items; tests compare two sizes.
    package private(set) var steps = 0

    /// `limits[slot]`: how many of that slot's items may draw at once.
    package init(limits: [Int]) {
        self.limits = limits.map { max(1, $0) }
        queues = limits.map { _ in [] }
        heads = limits.map { _ in 0 }
        running = limits.map { _ in 0 }
    }

    /// Queues item `index` on `slot`; items of one slot run in the order queued.
    package mutating func enqueue(_ index: Int, on slot: Int) {
        steps += 1
        queues[slot].append(index)
    }

    /// Takes the waiting item with the lowest index among the slots that
    /// have a free place, and counts it as running; nil when every slot
    /// with items waiting is full (or nothing waits).
    package mutating func next() -> (index: Int, slot: Int)? {
        var best: Int?
        var bestIndex = Int.max
        for slot in queues.indices {
            steps += 1
            guard running[slot] < limits[slot], heads[slot] < queues[slot].count else { continue }
            let index = queues[slot][heads[slot]]
            if index < bestIndex {
                best = slot
                bestIndex = index
            }
        }
        guard let slot = best else { return nil }
        heads[slot] += 1
        running[slot] += 1
        return (bestIndex, slot)
    }

    /// One of `slot`'s items is done drawing: its place is free.
    package mutating func release(_ slot: Int) {
        steps += 1
        running[slot] -= 1
    }

    /// Counts one step of the caller's own constant-cost work.
    package mutating func count() {
        steps += 1
    }

    /// Every item still waiting, removed from the queues.
    package mutating func drain() -> [Int] {
        var waiting: [Int] = []
        for slot in queues.indices {
            steps += queues[slot].count - heads[slot]
            waiting += queues[slot][heads[slot]...]
            heads[slot] = queues[slot].count
        }
        return waiting
    }
}
