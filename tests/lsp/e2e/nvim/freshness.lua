-- Headless Neovim (0.11) driver: the freshness rules and their fixes with the documented config.
--
-- Usage (see test_neovim_freshness.py):
--   CONFIG=examples/neovim/memdir.lua OUT=/tmp/report.json PROJECT=/path/project \
--   CHANGED=/path/project/src/util.py CHANGED_TEXT='...' [WATCH=1] \
--   nvim --headless --clean -n -i NONE -u freshness.lua /path/to/memory/payments.md
--
-- The memory is the agent's memory of PROJECT (a git repository, under CLAUDE_CONFIG_DIR). As the
-- docs tell a user, the project is added as a workspace folder. Scenario: MEM117 for a path git
-- shows renamed, its code action (vim.lsp.buf.code_action, apply = true) and the buffer text;
-- "Mark verified today" (MEM120); the relative-date fix (MEM119); hover on `last_verified`; then
-- CHANGED is rewritten on disk, outside Neovim, and MEM118 is awaited: with WATCH=1 the config
-- turns on dynamic file watching (Neovim 0.11 does not offer it on Linux), so the server hears of
-- the change; without it saving the memory re-checks it against the project as last heard of,
-- and the finding appears once the client is started again. Writes a JSON
-- report to $OUT; exits 0 on success.

local function env(name) return assert(os.getenv(name), name .. ' is required') end
local out_path = env('OUT')
local project = env('PROJECT')
local watch = os.getenv('WATCH') == '1'

local report = { steps = {} }
if os.getenv('LSP_DEBUG') then vim.lsp.log.set_level('debug') end

dofile(env('CONFIG'))
if watch then
  -- The documented opt-in: Neovim then watches with its own backend (inotifywait when installed).
  vim.lsp.config('memdir', {
    capabilities = { workspace = { didChangeWatchedFiles = { dynamicRegistration = true } } },
  })
end

local function finish(ok)
  report.ok = ok
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.json.encode(report))
  f:close()
  vim.cmd(ok and 'qa!' or 'cquit! 1')
end

local function codes(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do found[d.code] = d end
  return found
end

local function text(buf) return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') end

local function wait(what, fn, timeout)
  assert(vim.wait(timeout or 15000, fn, 20), 'timed out waiting for ' .. what)
end

--- Apply the code action at `code`'s finding whose title matches `pattern`; its title.
local function fix(buf, code, pattern)
  local d = assert(codes(buf)[code], 'no ' .. code)
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local titles, chosen = {}, nil
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(titles, action.title)
      if action.title:match(pattern) then chosen = action.title return true end
      return false
    end,
  })
  wait(code .. ' fixed (actions seen: ' .. vim.inspect(titles) .. ')', function()
    return chosen ~= nil and codes(buf)[code] == nil
  end)
  return chosen
end

local function attached(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'memdir' })[1]
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true,
  callback = function()
    local ok, err = pcall(function()
      local buf = vim.api.nvim_get_current_buf()
      wait('the client', function() return attached(buf) ~= nil end)
      report.root_dir = attached(buf).root_dir
      report.watching = attached(buf).capabilities.workspace.didChangeWatchedFiles.dynamicRegistration
      -- docs/editors/neovim.md: the project as a workspace folder, for the citation rules.
      vim.lsp.buf.add_workspace_folder(project)
      report.folders = vim.tbl_map(function(f) return f.name end, attached(buf).workspace_folders)

      wait('MEM117', function() return codes(buf)['MEM117'] ~= nil end)
      report.mem117 = codes(buf)['MEM117'].message
      report.found = vim.tbl_keys(codes(buf))

      report.renamed_title = fix(buf, 'MEM117', '^Replace `src/app%.py`')
      report.after_rename = text(buf)
      report.verified_title = fix(buf, 'MEM120', '^Mark verified today')
      report.after_verified = text(buf)
      report.date_title = fix(buf, 'MEM119', '^Replace “')
      report.after_date = text(buf)
      vim.cmd.write()

      -- hover on `last_verified`
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      local row
      for i, line in ipairs(lines) do
        if line:match('^last_verified:') then row = i - 1 end
      end
      local hover = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
        textDocument = vim.lsp.util.make_text_document_params(buf),
        position = { line = assert(row, 'no last_verified line'), character = 2 },
      }, 10000)
      local _, answer = next(hover or {})
      report.hover = answer and answer.result and answer.result.contents.value or vim.inspect(hover)

      -- A project file changed outside Neovim: the cited function is gone.
      local f = assert(io.open(env('CHANGED'), 'w'))
      f:write(env('CHANGED_TEXT'))
      f:close()
      if watch then
        wait('MEM118 after the project changed', function() return codes(buf)['MEM118'] ~= nil end)
      else
        -- Nothing tells the server. Saving the memory re-checks it against the project as the
        -- server last heard of it (the new line's MEM119 shows the re-check landed).
        vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'The audit is next Monday.' })
        vim.cmd.write()
        wait('the saved memory re-checked', function() return codes(buf)['MEM119'] ~= nil end)
        report.after_save = vim.tbl_keys(codes(buf))
        -- A new client lists the project again.
        local client = attached(buf)
        client:stop()
        wait('the client stopped', function() return client:is_stopped() end)
        vim.cmd.edit()
        wait('a new client', function() return attached(buf) ~= nil end)
        vim.lsp.buf.add_workspace_folder(project)
        wait('MEM118 after a restart', function() return codes(buf)['MEM118'] ~= nil end)
      end
      report.mem118 = codes(buf)['MEM118'].message
    end)
    if not ok then report.error = tostring(err) end
    finish(ok)
  end,
})
