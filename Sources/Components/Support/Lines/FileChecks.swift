@_spi(Components) import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

extension ComponentValidation {
    /// An error at `key` unless the file it names (relative to the pipeline file) can be read.
    func requireReadable(_ key: Parameter<String>, in values: ParameterValues, what: String) {
        let resolved = resolvePath(values[key])
        if access(resolved, R_OK) != 0 {
            error("cannot read \(what) '\(values[key])'", at: key, in: values, note: "looked for \(resolved)")
        }
    }

    /// An error at `key` unless the folder of the file it names exists (a sink creates the file,
    /// never its folder).
    func requireFolder(_ key: Parameter<String>, in values: ParameterValues, writing what: String) {
        let folder = LocalFiles.directory(of: values[key])
        if !fileExists(folder) {
            error(
                "the folder '\(folder)' of '\(values[key])' does not exist", at: key, in: values,
                note: "create it first, or write to \(what) in an existing folder")
        }
    }
}
