import Synchronization

/// Values by key, least recently used first out, up to `capacity` in all:
/// each entry costs its value's `cost` and its key's UTF-8 bytes. Looking up,
/// adding and evicting each take constant time: the entries form a list from
/// the most to the least recently used, linked through the slots they sit in,
/// so the oldest is at hand rather than searched for while the lock is held.
/// A value costing more than a quarter of the capacity is not kept.
final class RenderCache<Value: Sendable>: Sendable {
    private struct Entry {
        let key: String
        var value: Value
        var cost: Int
        /// The slots of the next more and the next less recently used entry (-1: none).
        var newer = -1
        var older = -1
    }

    private struct State {
        var slots: [Entry?] = []
        var vacant: [Int] = []
        var index: [String: Int] = [:]
        var newest = -1
        var oldest = -1
        var total = 0

        mutating func unlink(_ k: Int) {
            let (newer, older) = (slots[k]!.newer, slots[k]!.older)
            if newer >= 0 { slots[newer]!.older = older } else { newest = older }
            if older >= 0 { slots[older]!.newer = newer } else { oldest = newer }
        }

        mutating func makeNewest(_ k: Int) {
            slots[k]!.newer = -1
            slots[k]!.older = newest
            if newest >= 0 { slots[newest]!.newer = k }
            newest = k
            if oldest < 0 { oldest = k }
        }

        /// Takes the least recently used entry out and gives its value back.
        mutating func evictOldest() -> Value {
            let k = oldest
            unlink(k)
            let entry = slots[k]!
            slots[k] = nil
            vacant.append(k)
            index[entry.key] = nil
            total -= entry.cost
            return entry.value
        }
    }

    let capacity: Int
    private let cost: @Sendable (Value) -> Int
    private let state = Mutex(State())

    init(capacity: Int, cost: @escaping @Sendable (Value) -> Int) {
        self.capacity = capacity
        self.cost = cost
    }

    /// How many entries there are, and their cost in all.
    var usage: (count: Int, cost: Int) { state.withLock { ($0.index.count, $0.total) } }

    /// The value kept for `key`, which becomes the most recently used.
    func value(for key: String) -> Value? {
        state.withLock { state in
            guard let k = state.index[key] else { return nil }
            state.unlink(k)
            state.makeNewest(k)
            return state.slots[k]!.value
        }
    }

    /// Keeps `value` for `key` as the most recently used entry, evicting the
    /// least recently used ones until the whole costs at most `capacity`.
    func insert(_ value: Value, for key: String) {
        let cost = self.cost(value) + key.utf8.count
        guard cost <= capacity / 4 else { return }
        // The values let go are returned, so they are freed after the lock is released.
        _ = state.withLock { state -> [Value] in
            var released: [Value] = []
            if let k = state.index[key] {
                state.total += cost - state.slots[k]!.cost
                released.append(state.slots[k]!.value)
                state.slots[k]!.value = value
                state.slots[k]!.cost = cost
                state.unlink(k)
                state.makeNewest(k)
            } else {
                let entry = Entry(key: key, value: value, cost: cost)
                let k: Int
                if let reused = state.vacant.popLast() {
                    k = reused
                    state.slots[k] = entry
                } else {
                    k = state.slots.count
                    state.slots.append(entry)
                }
                state.index[key] = k
                state.total += cost
                state.makeNewest(k)
            }
            while state.total > capacity { released.append(state.evictOldest()) }
            return released
        }
    }
}
