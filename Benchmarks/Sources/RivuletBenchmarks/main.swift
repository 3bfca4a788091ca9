#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "w2-generate", arguments.count == 3, let count = Int(arguments[1]) {
    W2.generate(count: count, path: arguments[2])
    exit(0)
}
if arguments.first == "w3-generate", arguments.count == 3, let count = Int(arguments[1]) {
    W3.generate(count: count, path: arguments[2])
    exit(0)
}
if arguments.first == "w3-generate", arguments.count == 4, let count = Int(arguments[1]), let keys = Int(arguments[2]) {
    W3.generate(count: count, keys: keys, path: arguments[3])
    exit(0)
}
if arguments.first == "w3-loop", arguments.count == 3 {
    W3.loop(input: arguments[1], output: arguments[2])
    exit(0)
}
if arguments.first == "w2-generate-nested", arguments.count == 3, let count = Int(arguments[1]) {
    W2.generateNested(count: count, path: arguments[2])
    exit(0)
}
if arguments.first == "w2-loop", arguments.count == 3 || arguments.count == 4 {
    guard let variant = W2.Variant(rawValue: arguments.count == 4 ? arguments[3] : "project") else {
        print("unknown W2 variant '\(arguments[3])'; known: project, compute, nested")
        exit(2)
    }
    W2.loop(input: arguments[1], output: arguments[2], variant: variant)
    exit(0)
}
let names = arguments.isEmpty ? ["w1"] : arguments
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
