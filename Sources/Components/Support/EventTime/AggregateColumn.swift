/// A column of an aggregate's table (a count or a sum per key, or a scratch cell per field):
/// growable like an array, but owned by the one table that writes it, so that writing a cell
/// checks no sharing. An array's subscript set asks the runtime whether its buffer is shared
/// (a call per cell, several per element); a column cannot be copied, so it never is.
struct AggregateColumn<Cell: BitwiseCopyable>: ~Copyable {
    private var cells: UnsafeMutablePointer<Cell>
    private var capacity: Int
    /// How many cells it holds.
    private(set) var count = 0

    init() {
        capacity = 16
        cells = .allocate(capacity: capacity)
    }

    /// `count` cells of `cell`.
    init(repeating cell: Cell, count: Int) {
        self.init()
        append(cell, times: count)
    }

    deinit { cells.deallocate() }

    /// The cell at `index` (below `count`: checked, as an array's would be — a wrong row is a trap,
    /// never another key's cell written).
    @inline(__always)
    subscript(index: Int) -> Cell {
        get {
            precondition(index >= 0 && index < count, "cell out of the column")
            return cells[index]
        }
        set {
            precondition(index >= 0 && index < count, "cell out of the column")
            cells[index] = newValue
        }
    }

    /// Adds `cell` at the end.
    mutating func append(_ cell: Cell) {
        append(cell, times: 1)
    }

    /// Adds `times` copies of `cell` at the end.
    mutating func append(_ cell: Cell, times: Int) {
        guard times > 0 else { return }
        if count + times > capacity {
            let grown = UnsafeMutablePointer<Cell>.allocate(capacity: max(capacity * 2, count + times))
            grown.initialize(from: cells, count: count)
            cells.deallocate()
            cells = grown
            capacity = max(capacity * 2, count + times)
        }
        (cells + count).initialize(repeating: cell, count: times)
        count += times
    }

    /// Adds `added` at the end.
    mutating func append(contentsOf added: [Cell]) {
        for cell in added { append(cell) }
    }

    /// Forgets every cell, keeping the storage.
    mutating func removeAll() { count = 0 }

    /// The cells from `start` (`length` of them), as an array.
    func slice(from start: Int, length: Int) -> [Cell] {
        precondition(start >= 0 && start + length <= count)
        return Array(UnsafeBufferPointer(start: cells + start, count: length))
    }

    /// Every cell, as an array.
    var array: [Cell] { slice(from: 0, length: count) }
}
