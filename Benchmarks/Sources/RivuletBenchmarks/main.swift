#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
let names = arguments.isEmpty ? ["w1"] : Array(arguments)
for name in names {
    switch name {
    case "w1": W1.run()
    case "expr": ExpressionBenchmark.run()
    case "json": JSONBenchmark.run()
    default:
        print("unknown benchmark '\(name)'; known: w1, expr, json")
        exit(2)
    }
}
