/// The ids a server hands back for a run or a job (ComfyUI's `prompt_id`, a
/// jobs API's `id`), which badge puts into URL paths: 1 to 128 ASCII letters,
/// digits, `-` and `_`. Anything else (`/`, `..`, `%`, `?`, a space) could
/// steer a request, with the key, to another path of the server.
enum ServerID {
    static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128
            && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 || $0 == 95 }
    }
}
