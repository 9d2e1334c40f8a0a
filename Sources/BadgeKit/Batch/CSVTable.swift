import Foundation

/// A strict RFC 4180 reader that keeps the line and column of every cell, so a
/// bad value in row 312 is reported as `jobs.csv:312:14`. Quoted cells may hold
/// commas, quotes ("") and line breaks; a stray quote or a row with the wrong
/// number of cells is an error, never a silent guess.
package struct CSVTable: Sendable {
    package struct Cell: Sendable, Hashable {
        package var text: String
        package var location: SourceLocation
    }

    package var header: [Cell]
    package var rows: [[Cell]]

    /// The most cells a table may hold. Each costs ~50 bytes kept: 60 MB of
    /// commas took 3.0 GB before reading stopped at the first cell past this.
    package static let maxCells = 1_000_000

    package static func parse(_ data: Data, file: String?) throws -> CSVTable {
        guard let text = String(data: data, encoding: .utf8) else {
            let offset = firstInvalidUTF8(in: data)
            throw BadgeError(.config, "the CSV file is not UTF-8 text (byte \(offset))", path: file,
                             hint: "save it as UTF-8 (most spreadsheets offer 'CSV UTF-8')")
        }
        var records: [[Cell]] = []
        var record: [Cell] = []
        var cell = ""
        var cellStart = SourceLocation(line: 1, column: 1, offset: 0)
        var line = 1, column = 1, offset = 0
        var inQuotes = false, wasQuoted = false, afterQuote = false
        // Walked in place (an array of the scalars would take 4 bytes a character more).
        let scalars = text.unicodeScalars
        var i = scalars.startIndex
        if scalars.first == "\u{FEFF}" { i = scalars.index(after: i) }  // Excel's byte-order mark
        func next(after index: String.UnicodeScalarView.Index) -> Unicode.Scalar? {
            let following = scalars.index(after: index)
            return following < scalars.endIndex ? scalars[following] : nil
        }
        var cells = 0
        var overBudget = false

        func endCell() {
            cells += 1
            if cells > maxCells { overBudget = true }
            record.append(Cell(text: cell, location: cellStart))
            cell = ""
            wasQuoted = false
            afterQuote = false
        }
        func endRecord() {
            endCell()
            // A blank line (one empty, unquoted cell) is not a row.
            if !(record.count == 1 && record[0].text.isEmpty) { records.append(record) }
            record = []
        }
        func here() -> SourceLocation { SourceLocation(line: line, column: column, offset: offset) }
        func fail(_ message: String, hint: String? = nil) -> BadgeError {
            BadgeError(.config, message, path: file, location: here(), hint: hint)
        }

        while i < scalars.endIndex {
            let c = scalars[i]
            if inQuotes {
                if c == "\"" {
                    if next(after: i) == "\"" {
                        cell.unicodeScalars.append("\"")
                        i = scalars.index(i, offsetBy: 2); column += 2; offset += 2
                        continue
                    }
                    inQuotes = false
                    afterQuote = true
                } else {
                    cell.unicodeScalars.append(c)
                    if c == "\n" { line += 1; column = 0 }
                }
            } else if c == "," {
                endCell()
                if overBudget {
                    throw fail("the CSV file holds more than \(maxCells) cells; badge reads no more",
                               hint: "split it, or run it in shards (--shard K/N)")
                }
                cellStart = SourceLocation(line: line, column: column + 1, offset: offset + 1)
            } else if c == "\r" || c == "\n" {
                if c == "\r" && next(after: i) == "\n" { i = scalars.index(after: i) }
                endRecord()
                if overBudget {
                    throw fail("the CSV file holds more than \(maxCells) cells; badge reads no more",
                               hint: "split it, or run it in shards (--shard K/N)")
                }
                line += 1; column = 0
                cellStart = SourceLocation(line: line, column: 1, offset: offset + 1)
            } else if afterQuote {
                throw fail("unexpected text after a closing quote", hint: "inside quotes, write a quote as two quotes (\"\")")
            } else if c == "\"" {
                guard cell.isEmpty else {
                    throw fail("a quote inside an unquoted cell", hint: "put the whole cell in quotes and double the quote (\"\")")
                }
                inQuotes = true
                wasQuoted = true
            } else {
                cell.unicodeScalars.append(c)
            }
            i = scalars.index(after: i); column += 1; offset += 1
        }
        if inQuotes {
            throw BadgeError(.config, "a quoted cell is never closed", path: file, location: cellStart,
                             hint: "add the closing quote")
        }
        if !cell.isEmpty || wasQuoted || !record.isEmpty { endRecord() }

        guard let header = records.first else {
            throw BadgeError(.config, "the CSV file is empty", path: file, hint: "the first row names the columns, e.g. name,prompt")
        }
        let rows = Array(records.dropFirst())
        for row in rows where row.count != header.count {
            throw BadgeError(.config, "this row has \(row.count) cells but the header has \(header.count)", path: file,
                             location: row[0].location, hint: "quote cells that contain commas")
        }
        return CSVTable(header: header, rows: rows)
    }

    static func firstInvalidUTF8(in data: Data) -> Int {
        var iterator = data.makeIterator()
        var decoder = UTF8()
        var consumed = 0
        while true {
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar): consumed += UTF8.width(scalar)
            case .emptyInput: return data.count
            case .error: return consumed
            }
        }
    }
}
