-- Headless Neovim (0.11) driver: memdir-lsp in a real editor, with the documented config.
--
-- Usage (see test_neovim.py):
--   CONFIG=examples/neovim/memdir.lua SNIPPET=/tmp/index-call.lua OUT=/tmp/report.json \
--   ORPHAN=/path/memory/orphan.md README=/path/project/README.md \
--   nvim --headless --clean -n -i NONE -u driver.lua /path/to/memory/MEMORY.md
--
-- CONFIG is the configuration of docs/editors/neovim.md, loaded as a user would; this driver
-- only adds a handler that records memory/relevantMemories. SNIPPET is the documented
-- `memory/index` call. Scenario: attach to MEMORY.md, pulled diagnostics, the documented call
-- (and the same with nil params), the pushed findings of the unopened orphan, opening it (the
-- its findings stay pushed) and a file written from Neovim clearing the index's dangling entry, "Move to topic file"
-- through vim.lsp.buf.code_action, :wall, memory/prefetch, and finally a README in a plain git
-- repository, which must start no client. Writes a JSON report to $OUT; exits 0 on success.

local t0 = vim.uv.hrtime()
local function ms() return math.floor((vim.uv.hrtime() - t0) / 1e6) end

local function env(name) return assert(os.getenv(name), name .. ' is required') end
local out_path = env('OUT')
local orphan_path = env('ORPHAN')
local missing_path = env('MISSING')
local readme_path = env('README')
local block_line = tonumber(os.getenv('BLOCK_LINE') or '8') -- 0-based line inside the block
local query = os.getenv('QUERY') or 'who handles the pagerduty oncall escalation?'

local report = { timings = {}, notifications = {}, printed = {} }

dofile(env('CONFIG'))
-- vim.lsp.config merges: the documented config stays as it is, plus one more handler.
vim.lsp.config('memdir', {
  handlers = {
    ['memory/relevantMemories'] = function(_, result, _)
      table.insert(report.notifications, result)
    end,
  },
})

local function finish(ok)
  report.ok = ok
  report.timings.total_ms = ms()
  local lf = io.open(vim.lsp.log.get_filename(), 'r')
  if lf then -- spawn errors, and whatever the server wrote to stderr
    report.lsp_log = lf:read('*a'):sub(-6000)
    lf:close()
  end
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.json.encode(report))
  f:close()
  vim.cmd(ok and 'qa!' or 'cquit! 1')
end

local function summary(diags)
  return vim.tbl_map(function(d)
    return { lnum = d.lnum, col = d.col, message = d.message, severity = d.severity,
             source = d.source, code = d.code }
  end, diags)
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true, -- :edit below must fire FileType, which starts (or not) the client
  callback = function()
    local ok, err = pcall(function()
      local buf = vim.api.nvim_get_current_buf()
      report.filetype = vim.bo[buf].filetype

      assert(vim.wait(15000, function()
        return #vim.lsp.get_clients({ bufnr = buf, name = 'memdir' }) > 0
      end, 20), 'client never attached')
      local client = vim.lsp.get_clients({ bufnr = buf, name = 'memdir' })[1]
      report.timings.attached_ms = ms()
      report.root_dir = client.root_dir
      report.pull = client.server_capabilities.diagnosticProvider ~= nil
      local push_ns = vim.lsp.diagnostic.get_namespace(client.id, false)
      local pull_ns = vim.lsp.diagnostic.get_namespace(client.id, true)

      -- 1) diagnostics of the open index (pushed: the server offers Neovim 0.11 no pull)
      assert(vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 20),
        'no diagnostics')
      report.timings.diagnostics_ms = ms()
      report.diagnostics = summary(vim.diagnostic.get(buf))

      -- 2) the documented memory/index call, then the same request with nil params
      local real_print = print
      print = function(...) table.insert(report.printed, table.concat({ ... }, ' ')) end
      dofile(env('SNIPPET'))
      local waited = vim.wait(10000, function() return #report.printed > 0 end, 10)
      print = real_print
      assert(waited, 'the documented memory/index call printed nothing')
      local response
      client:request('memory/index', nil, function(e, result)
        response = { err = e, result = result }
      end, buf)
      assert(vim.wait(10000, function() return response ~= nil end, 10), 'no memory/index reply')
      report.index_nil = response

      -- 3) the orphan is not open, yet its finding is there
      local function orphan_buf()
        local b = vim.fn.bufnr(orphan_path)
        return b > 0 and b or nil
      end
      assert(vim.wait(15000, function()
        return orphan_buf() ~= nil and #vim.diagnostic.get(orphan_buf()) > 0
      end, 20), 'no diagnostics for the unopened orphan')
      local ob = assert(orphan_buf())
      report.orphan = {
        loaded = vim.api.nvim_buf_is_loaded(ob),
        attached = #vim.lsp.get_clients({ bufnr = ob }),
        pushed = summary(vim.diagnostic.get(ob, { namespace = push_ns })),
        pulled = #vim.diagnostic.get(ob, { namespace = pull_ns }),
      }

      -- 4) opened, the orphan keeps its pushed findings (the server offers Neovim no pull, which
      -- it could not keep up to date); a file written from Neovim updates the open index's
      -- findings at once, with no edit of the index
      vim.cmd.edit(vim.fn.fnameescape(orphan_path))
      assert(vim.wait(15000, function()
        return #vim.lsp.get_clients({ bufnr = ob, name = 'memdir' }) > 0
      end, 20), 'the opened orphan was not attached')
      report.orphan_open = {
        pushed = summary(vim.diagnostic.get(ob, { namespace = push_ns })),
        pulled = #vim.diagnostic.get(ob, { namespace = pull_ns }),
      }
      local function index_codes()
        local codes = {}
        for _, d in ipairs(vim.diagnostic.get(buf)) do codes[d.code] = true end
        return codes
      end
      -- The directory's findings of the index (MEM005) may be pushed after the orphan's:
      -- wait for them, not for what happens to be there.
      report.index_dangling_before = vim.wait(15000, function()
        return index_codes()['MEM005'] == true
      end, 20)
      vim.cmd.edit(vim.fn.fnameescape(missing_path))
      vim.api.nvim_buf_set_lines(0, 0, -1, false, {
        '---', 'name: gone', 'description: the topic file the index already linked',
        'type: project', '---', 'Written from Neovim.',
      })
      vim.cmd.write()
      report.index_dangling_after = not vim.wait(15000, function()
        return not index_codes()['MEM005']
      end, 20)
      vim.api.nvim_set_current_buf(buf)
      vim.cmd('bdelete ' .. ob)
      vim.cmd('bdelete ' .. vim.fn.bufnr(missing_path))

      -- 5) "Move to topic file" through the real code-action path, then save everything
      local before = vim.api.nvim_buf_line_count(buf)
      vim.api.nvim_win_set_cursor(0, { block_line + 1, 0 })
      local titles = {}
      vim.lsp.buf.code_action({
        apply = true,
        filter = function(action)
          table.insert(titles, action.title)
          return action.title:match('^Move to topic file') ~= nil
        end,
      })
      assert(vim.wait(10000, function()
        return vim.api.nvim_buf_line_count(buf) < before
      end, 20), 'the move was not applied; actions seen: ' .. vim.inspect(titles))
      report.code_actions = titles
      vim.cmd('silent wall')
      report.timings.moved_ms = ms()

      -- 6) memory/prefetch answers at once, memory/relevantMemories follows
      response = nil
      client:request('memory/prefetch', { query = query, sessionId = 'nvim-session' },
        function(e, result) response = { err = e, result = result } end, buf)
      assert(vim.wait(10000, function() return response ~= nil end, 10), 'no prefetch reply')
      assert(response.err == nil, 'prefetch failed: ' .. vim.inspect(response.err))
      report.prefetch = response.result
      assert(vim.wait(15000, function() return #report.notifications > 0 end, 10),
        'no memory/relevantMemories notification')
      report.timings.prefetch_ms = ms()

      -- 7) a README in a plain git repository starts no client. vim.lsp.enable's FileType
      --    callback schedules the start; a callback scheduled after it runs after it.
      vim.cmd.edit(vim.fn.fnameescape(readme_path))
      local readme = vim.api.nvim_get_current_buf()
      local settled = false
      vim.schedule(function() settled = true end)
      assert(vim.wait(5000, function() return settled end, 10), 'the event loop stalled')
      local root = 'not called'
      vim.lsp.config.memdir.root_dir(readme, function(r) root = r end)
      report.readme = {
        filetype = vim.bo[readme].filetype,
        attached = #vim.lsp.get_clients({ bufnr = readme }),
        clients = #vim.lsp.get_clients({ name = 'memdir' }),
        root = root,
      }
    end)
    if not ok then report.error = tostring(err) end
    finish(ok)
  end,
})
