// What store/db.h's backends share: which backend a store target names,
// how messages name it, and PostgreSQL's text of the store's SQL.
#include "store/db.h"

#include "base/url_secrets.h"

#include <cctype>
#include <string>
#include <vector>

namespace rooftrace {

bool IsPostgresUrl(std::string_view target) {
  return target.rfind("postgresql://", 0) == 0 ||
         target.rfind("postgres://", 0) == 0;
}

std::string StoreDisplayName(std::string_view target) {
  if (!IsPostgresUrl(target)) return std::string(target);
  // postgresql://user:password@host/db, ...?password=: the password stays
  // out of everything people see.
  return HidePasswords(target, /*whole_url=*/true);
}

std::string RawStreamDir(std::string_view target) {
  if (!IsPostgresUrl(target)) return std::string(target) + ".raw";
  // postgresql://[user@]host[:port]/database[?...]
  const size_t scheme = target.find("://") + 3;
  const size_t slash = target.find('/', scheme);
  std::string db = "postgresql";
  if (slash != std::string_view::npos) {
    const size_t end = target.find_first_of("?#", slash + 1);
    const std::string_view name = target.substr(
        slash + 1, end == std::string_view::npos ? end : end - slash - 1);
    if (!name.empty()) db.clear();
    for (const char c : name) {
      db += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                    c == '_'
                ? c
                : '_';
    }
  }
  return "rooftrace-" + db + ".raw";
}

StatusOr<std::unique_ptr<Db>> OpenDbForWrite(const std::string& target) {
  if (IsPostgresUrl(target)) return OpenPostgresDb(target, false);
  return OpenSqliteDb(target, target, false);
}

StatusOr<std::unique_ptr<Db>> OpenDbForRead(const std::string& target,
                                            const std::string& display_name) {
  if (IsPostgresUrl(target)) return OpenPostgresDb(target, true);
  return OpenSqliteDb(target, display_name, true);
}

namespace {

struct Token {
  enum Kind { kWord, kString, kSpace, kComment, kParam, kOther } kind;
  std::string_view text;
};

std::vector<Token> Lex(std::string_view sql) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < sql.size()) {
    const size_t start = i;
    const char c = sql[i];
    Token::Kind kind = Token::kOther;
    if (c == '\'' || c == '"') {  // a literal or quoted name; '' escapes
      kind = c == '\'' ? Token::kString : Token::kWord;
      ++i;
      while (i < sql.size()) {
        if (sql[i] == c) {
          if (i + 1 < sql.size() && sql[i + 1] == c) {
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        ++i;
      }
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      kind = Token::kComment;
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      kind = Token::kSpace;
      while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i])))
        ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      kind = Token::kWord;
      while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) ||
                                sql[i] == '_'))
        ++i;
    } else {
      kind = c == '?' ? Token::kParam : Token::kOther;
      ++i;
    }
    out.push_back({kind, sql.substr(start, i - start)});
  }
  return out;
}

bool Is(const Token& t, std::string_view word) {
  if (t.kind != Token::kWord || t.text.size() != word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(t.text[i])) != word[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string PostgresSql(std::string_view sql) {
  const std::vector<Token> tokens = Lex(sql);
  // The index of the next token that is not space or a comment.
  auto next = [&](size_t i) {
    while (i < tokens.size() && (tokens[i].kind == Token::kSpace ||
                                 tokens[i].kind == Token::kComment))
      ++i;
    return i;
  };
  auto word_at = [&](size_t i, std::string_view w) {
    return i < tokens.size() && Is(tokens[i], w);
  };
  std::string out;
  out.reserve(sql.size() + 64);
  int param = 0;
  // Per statement: whether it defines columns (CREATE TABLE, ALTER TABLE),
  // the depth of parentheses, and for CREATE TABLE whether the column list
  // has an INTEGER PRIMARY KEY (else it gets a rowid column).
  bool at_statement_start = true, ddl = false, create_table = false;
  bool has_id = false;
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind == Token::kComment) continue;
    if (t.kind == Token::kSpace) {
      out += t.text;
      continue;
    }
    if (at_statement_start) {
      at_statement_start = false;
      const size_t second = next(i + 1);
      create_table = Is(t, "CREATE") && word_at(second, "TABLE");
      ddl = create_table || (Is(t, "ALTER") && word_at(second, "TABLE"));
      has_id = false;
      depth = 0;
      // The kernels view's INSTEAD OF trigger: PostgreSQL's store is
      // written by the collector only, into kernel_rows.
      if (Is(t, "CREATE") && word_at(second, "TRIGGER")) {
        size_t j = second;
        while (j < tokens.size()) {
          if (Is(tokens[j], "END")) {
            const size_t semi = next(j + 1);
            if (semi < tokens.size() && tokens[semi].text == ";") {
              j = semi;
              break;
            }
          }
          ++j;
        }
        i = j;
        at_statement_start = true;
        continue;
      }
      // PostgreSQL has no CREATE VIEW IF NOT EXISTS.
      if (Is(t, "CREATE") && word_at(second, "VIEW")) {
        const size_t if_ = next(second + 1);
        const size_t not_ = next(if_ + 1);
        const size_t exists = next(not_ + 1);
        if (word_at(if_, "IF") && word_at(not_, "NOT") &&
            word_at(exists, "EXISTS")) {
          out += "CREATE OR REPLACE VIEW";
          i = exists;
          continue;
        }
      }
    }
    if (t.kind == Token::kParam) {
      out += "$" + std::to_string(++param);
      continue;
    }
    if (t.kind == Token::kOther) {
      if (t.text == ";") at_statement_start = true;
      if (t.text == "(") ++depth;
      if (t.text == ")") {
        if (--depth == 0 && create_table && !has_id) {
          // SQLite keeps an implicit rowid in every such table (the order
          // rows were inserted in); PostgreSQL's tables get it as a column.
          out += ", rowid BIGINT GENERATED ALWAYS AS IDENTITY";
          has_id = true;
        }
      }
      out += t.text;
      continue;
    }
    if (ddl && Is(t, "INTEGER")) {
      const size_t primary = next(i + 1);
      const size_t key = next(primary + 1);
      if (depth == 1 && word_at(primary, "PRIMARY") && word_at(key, "KEY")) {
        out += "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
        has_id = true;
        i = key;
      } else {
        out += "BIGINT";
      }
      continue;
    }
    if (ddl && Is(t, "REAL")) {
      out += "DOUBLE PRECISION";
      continue;
    }
    // Bytewise order and comparison, as SQLite's BINARY collation.
    if (ddl && Is(t, "TEXT")) {
      out += "TEXT COLLATE \"C\"";
      continue;
    }
    // Not enforced by SQLite as rooftrace opens it; not by PostgreSQL
    // either, so that both accept the same rows in the same order.
    if (ddl && Is(t, "REFERENCES")) {
      size_t j = next(i + 1);  // the table
      const size_t open = next(j + 1);
      if (open < tokens.size() && tokens[open].text == "(") {
        j = open;
        while (j < tokens.size() && tokens[j].text != ")") ++j;
      }
      i = j;
      // Drop the space before it as well.
      while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back())))
        out.pop_back();
      continue;
    }
    out += t.text;
  }
  return out;
}

}  // namespace rooftrace
