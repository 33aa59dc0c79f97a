// Where a PostgreSQL password sits in text rooftrace shows people: a store
// URL (postgresql://user:PASSWORD@host/db, ...?password=PASSWORD), a
// key-value connection string (password=PASSWORD), or a message that
// echoes one (libpq quotes a malformed URL whole). Every place that shows
// a store location renders it through store/db.h StoreDisplayName(), which
// uses these; the command line scrubs argv with them so that `ps` does not
// show the password either.
//
// Pure functions (ScrubPasswordsFromArgs writes only the argv it is
// given); thread-safe.
#ifndef ROOFTRACE_BASE_URL_SECRETS_H_
#define ROOFTRACE_BASE_URL_SECRETS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rooftrace {

// The [begin, end) byte ranges of `text` that hold a password:
// - in every postgresql:// or postgres:// URL: its user information's
//   password, from the first ':' after the scheme to the last '@' before
//   the query (wider than libpq reads it, so that a malformed URL, one
//   with a '/' in its password, is masked too), and the value of each
//   query parameter whose key, percent-decoded, is `password`;
// - every `password=VALUE` (spaces allowed around '='; a value in single
//   quotes up to its closing quote), as key-value connection strings and
//   libpq's messages write it.
// `whole_url`: `text` is one URL (a command-line word), so it does not end
// at a space or a quote as a URL inside a message does.
std::vector<std::pair<size_t, size_t>> PasswordSpans(std::string_view text,
                                                     bool whole_url);

// `text` with each password span replaced by "***".
std::string HidePasswords(std::string_view text, bool whole_url = false);

// The passwords of `url` as they appear in it and percent-decoded, for
// removing them from a message that quotes them out of their URL (libpq's
// "invalid integer value \"...\" for connection option \"port\"").
std::vector<std::string> UrlPasswords(std::string_view url);

// `text` with every occurrence of each of `secrets` (empty ones skipped)
// replaced by "***", and every double-quoted piece that is part of one (or
// holds one) as well.
std::string RemoveSecrets(std::string text,
                          const std::vector<std::string>& secrets);

// Overwrites, in place, the password bytes of argv[1] to argv[argc-1] with
// '*' (same length: the words stay where the kernel's copy of the command
// line has them), so that `ps` and /proc/PID/cmdline no longer show them.
// Call after the words were parsed (the parser keeps its own copies).
void ScrubPasswordsFromArgs(int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_URL_SECRETS_H_
