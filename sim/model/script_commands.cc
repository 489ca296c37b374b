// EVAL, EVALSHA and SCRIPT, after Redis 7.0.15's src/eval.c (evalGenericCommand,
// scriptCommand). The script engine is sim/model/lua_scripting.h.
#include <span>
#include <string>

#include "sim/model/command.h"
#include "sim/model/numbers.h"
#include "sim/model/server_state.h"

namespace locksim::model_detail {
namespace {

// key_count: evalGenericCommand's numkeys checks; false with `error` set.
bool key_count(const CommandContext& ctx, std::int64_t& count, Reply& error) {
  if (!parse_integer(ctx.argv[2], count)) {
    error = not_an_integer();
    return false;
  }
  if (count > static_cast<std::int64_t>(ctx.argv.size()) - 3) {
    error = error_reply("ERR Number of keys can't be greater than number of args");
    return false;
  }
  if (count < 0) {
    error = error_reply("ERR Number of keys can't be negative");
    return false;
  }
  return true;
}

// eval: evalGenericCommand for EVAL and EVAL_RO.
Reply eval(CommandContext& ctx, bool read_only_command) {
  std::int64_t count = 0;
  Reply error;
  if (!key_count(ctx, count, error)) return error;
  std::string sha;
  if (!ctx.server.lua->load(ctx.argv[1], sha, error)) return error;
  return run_script(ctx, sha, count, read_only_command);
}

// evalsha: evalGenericCommand for EVALSHA and EVALSHA_RO.
Reply evalsha(CommandContext& ctx, bool read_only_command) {
  if (ctx.argv[1].size() != 40) return no_script();
  std::int64_t count = 0;
  Reply error;
  if (!key_count(ctx, count, error)) return error;
  if (!ctx.server.lua->exists(ctx.argv[1])) return no_script();
  return run_script(ctx, ctx.argv[1], count, read_only_command);
}

}  // namespace

bool script_denies_oom(const ServerState& server, std::span<const std::string_view> argv) {
  const bool by_sha = equals_ignoring_case(argv[0], "evalsha") ||
                      equals_ignoring_case(argv[0], "evalsha_ro");
  ScriptFlags flags;
  if (by_sha) {
    if (argv[1].size() != 40 || !server.lua->exists(argv[1])) return false;
    flags = server.lua->flags(argv[1]);
  } else if (!LuaScripting::shebang_flags(argv[1], flags)) {
    return false;  // a bad shebang line: EVAL's own flags, and the error comes later
  }
  return flags.shebang && !flags.allow_oom && !flags.no_writes;
}

Reply cmd_eval(CommandContext& ctx) { return eval(ctx, false); }
Reply cmd_eval_ro(CommandContext& ctx) { return eval(ctx, true); }
Reply cmd_evalsha(CommandContext& ctx) { return evalsha(ctx, false); }
Reply cmd_evalsha_ro(CommandContext& ctx) { return evalsha(ctx, true); }

Reply cmd_script(CommandContext& ctx) {
  const std::string sub = lower(ctx.argv[1]);
  struct Sub {
    const char* name;
    int arity;
  };
  static constexpr Sub kSubcommands[] = {{"debug", 3}, {"exists", -3}, {"flush", -2},
                                         {"help", 2},  {"kill", 2},    {"load", 3}};
  const Sub* found = nullptr;
  for (const Sub& candidate : kSubcommands) {
    if (sub == candidate.name) found = &candidate;
  }
  if (found == nullptr) {
    const std::string_view name = ctx.argv[1].substr(0, ctx.argv[1].find('\0'));
    std::string text =
        "ERR unknown subcommand '" + std::string(name.substr(0, 128)) + "'. Try SCRIPT HELP.";
    for (char& c : text) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    return error_reply(std::move(text));
  }
  const auto argc = static_cast<int>(ctx.argv.size());
  if ((found->arity > 0 && argc != found->arity) || (found->arity < 0 && argc < -found->arity)) {
    return arity_error("script|" + sub);
  }
  if (sub == "load") {
    std::string sha;
    Reply error;
    if (!ctx.server.lua->load(ctx.argv[2], sha, error)) return error;
    return bulk_reply(sha);
  }
  if (sub == "exists") {
    std::vector<Reply> found_flags;
    for (std::size_t j = 2; j < ctx.argv.size(); ++j) {
      found_flags.push_back(integer_reply(ctx.server.lua->exists(ctx.argv[j]) ? 1 : 0));
    }
    return array_reply(std::move(found_flags));
  }
  if (sub == "flush") {
    if (!(argc == 2 || (argc == 3 && (equals_ignoring_case(ctx.argv[2], "sync") ||
                                      equals_ignoring_case(ctx.argv[2], "async"))))) {
      return error_reply("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    ctx.server.reset_scripts();
    return ok_reply();
  }
  if (sub == "kill") return error_reply("NOTBUSY No scripts in execution right now.");
  return not_modelled("script " + sub);
}

}  // namespace locksim::model_detail
