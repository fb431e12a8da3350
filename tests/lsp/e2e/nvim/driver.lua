-- Headless Neovim (0.11) driver: memdir-lsp in a real editor.
--
-- Usage (see test_neovim.py):
--   MEMDIR_LSP_CMD='/path/python -m memdir_lsp' OUT=/tmp/report.json \
--   nvim --headless --clean -n -i NONE -u driver.lua /path/to/memory/MEMORY.md
--
-- Scenario: attach to MEMORY.md, wait for diagnostics, apply "Move to topic file" on the block
-- of content written into the index, save every buffer (:wall) so the edit reaches the disk,
-- then call memory/prefetch and wait for the memory/relevantMemories notification.
-- Writes a JSON report to $OUT and exits 0 on success, 1 on failure.

local t0 = vim.uv.hrtime()
local function ms() return math.floor((vim.uv.hrtime() - t0) / 1e6) end

local out_path = assert(os.getenv('OUT'), 'OUT is required')
local cmd = vim.split(assert(os.getenv('MEMDIR_LSP_CMD'), 'MEMDIR_LSP_CMD is required'), ' ',
  { trimempty = true })
local block_line = tonumber(os.getenv('BLOCK_LINE') or '8') -- 0-based line inside the block
local query = os.getenv('QUERY') or 'who handles the pagerduty oncall escalation?'

local report = { timings = {}, notifications = {} }

vim.lsp.config('memdir', {
  cmd = cmd,
  filetypes = { 'markdown' },
  root_markers = { 'MEMORY.md', '.git' },
  handlers = {
    ['memory/relevantMemories'] = function(_, result, _)
      table.insert(report.notifications, result)
    end,
  },
})
vim.lsp.enable('memdir')

local function finish(ok)
  report.ok = ok
  report.timings.total_ms = ms()
  if not ok then -- spawn and config errors only show up in lsp.log
    local lf = io.open(vim.lsp.log.get_filename(), 'r')
    if lf then
      report.lsp_log = lf:read('*a'):sub(-3000)
      lf:close()
    end
  end
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.json.encode(report))
  f:close()
  vim.cmd(ok and 'qa!' or 'cquit! 1')
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
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

      -- 1) diagnostics (pulled: Neovim 0.11 asks on attach when the server offers them)
      assert(vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 20),
        'no diagnostics')
      report.timings.diagnostics_ms = ms()
      report.diagnostics = vim.tbl_map(function(d)
        return { lnum = d.lnum, col = d.col, message = d.message, severity = d.severity,
                 source = d.source, code = d.code }
      end, vim.diagnostic.get(buf))

      -- 2) "Move to topic file" through the real code-action path, then save everything
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
      report.buffers = vim.tbl_map(function(b) return vim.api.nvim_buf_get_name(b) end,
        vim.tbl_filter(function(b) return vim.api.nvim_buf_is_loaded(b) end,
          vim.api.nvim_list_bufs()))
      report.timings.moved_ms = ms()

      -- 3) memory/prefetch answers at once, memory/relevantMemories follows
      local response
      client:request('memory/prefetch', { query = query, sessionId = 'nvim-session' },
        function(e, result) response = { err = e, result = result } end, buf)
      assert(vim.wait(10000, function() return response ~= nil end, 10), 'no prefetch reply')
      assert(response.err == nil, 'prefetch failed: ' .. vim.inspect(response.err))
      report.prefetch = response.result
      assert(vim.wait(15000, function() return #report.notifications > 0 end, 10),
        'no memory/relevantMemories notification')
      report.timings.prefetch_ms = ms()
    end)
    if not ok then report.error = tostring(err) end
    finish(ok)
  end,
})
