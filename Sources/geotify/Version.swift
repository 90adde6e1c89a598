/// The version of this build of `geotify`: the package's version, written here and
/// nowhere else, and named by the release's git tag (`v` + this). It is compiled in, so
/// a binary built without git (the Docker build, whose context leaves `.git` out; a
/// source archive) knows it as well as one built from a clone.
enum Version {
    static let number = "0.1.0"

    /// What `geotify --version` prints.
    static let line = "geotify \(number)"
}
