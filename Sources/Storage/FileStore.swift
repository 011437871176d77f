import Foundation
import Glibc
import Identity

/// Objects' bytes on local disk, one immutable file per upload: `objects/<version>`, where the
/// version is a new random name each time. A file is written under `tmp/`, fsynced, renamed
/// into `objects/` and the folder fsynced, so a crash never leaves half an object under its
/// final name; the row that names the version is committed only afterwards.
public struct FileStore: Sendable {
    public let root: URL

    public init(root: URL) throws {
        self.root = root
        for folder in ["objects", "tmp"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        removeStaleTemporaries()
    }

    /// Seconds after which a file under `tmp/` is an upload that a crash cut short (younger ones
    /// may be another server's upload in progress: servers that share a database share the folder).
    static let staleTemporarySeconds: Double = 3600

    /// Removes what uploads cut short by a crash left under `tmp/` (never visible as objects).
    func removeStaleTemporaries(now: Date = Date()) {
        let folder = root.appendingPathComponent("tmp")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names {
            let path = folder.appendingPathComponent(name).path
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > Self.staleTemporarySeconds
            else { continue }
            unlink(path)
        }
    }

    private var objects: String { root.appendingPathComponent("objects").path }
    private var temporary: String { root.appendingPathComponent("tmp").path }

    /// A fresh version name: 128 random bits in hex (never from a request).
    static func newVersion() -> String { Crypto.hex(Crypto.randomBytes(16)) }

    /// The file of `version`; a name that is not one of ours (32 hex digits) names none.
    func path(of version: String) -> String {
        let isOurs = version.utf8.count == 32 && version.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return objects + "/" + (isOurs ? version : "invalid")
    }

    /// Writes all of `bytes` to `fd` (a write cut short by a signal goes on); false on an error.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var written = 0
        return bytes.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += count
            }
            return true
        }
    }

    /// Writes `bytes` durably and answers their version.
    public func write(_ bytes: [UInt8]) throws(StorageError) -> String {
        let version = Self.newVersion()
        let temp = temporary + "/" + version
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .internalError }
        guard Self.writeAll(fd, bytes), fsync(fd) == 0 else {
            close(fd)
            unlink(temp)
            throw .internalError
        }
        close(fd)
        guard rename(temp, path(of: version)) == 0 else {
            unlink(temp)
            throw .internalError
        }
        try syncFolder(objects)
        return version
    }

    /// A second name for the bytes of `version` (a copy: files never change, so a hard link is one).
    public func duplicate(_ version: String) throws(StorageError) -> String {
        let copy = Self.newVersion()
        guard link(path(of: version), path(of: copy)) == 0 else { throw .objectNotFound }
        try syncFolder(objects)
        return copy
    }

    /// The bytes of `version`; nil when its file is gone.
    public func read(_ version: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path(of: version)) else { return nil }
        return [UInt8](data)
    }

    /// Removes the bytes of `version` (nothing when they are gone already).
    public func remove(_ version: String) {
        unlink(path(of: version))
    }

    private func syncFolder(_ folder: String) throws(StorageError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .internalError }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .internalError }
    }
}
