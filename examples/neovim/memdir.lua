-- memdir-lsp for Neovim 0.11+: put this in init.lua (or ~/.config/nvim/plugin/memdir.lua).
vim.lsp.config('memdir', {
  cmd = { 'memdir-lsp' },            -- or { '/path/to/venv/bin/python', '-m', 'memdir_lsp' }
  filetypes = { 'markdown' },
  -- Start only for Markdown inside a memory directory: the nearest folder above the file that
  -- holds MEMORY.md or memdir.toml, or the agent's own layout (~/.claude/projects/<slug>/memory,
  -- agent-memory/<agent>). Other Markdown (a README, docs) starts no server.
  root_dir = function(bufnr, on_dir)
    local file = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
    if file == '' then
      return
    end
    local root = file:match('^(.*/projects/[^/]+/memory)/')
      or file:match('^(.*/agent%-memory/[^/]+)/')
      or file:match('^(.*/agent%-memory%-local/[^/]+)/')
      or vim.fs.root(file, { 'MEMORY.md', 'memdir.toml' })
    if root then
      on_dir(root)
    end
  end,
  settings = {
    memdir = {
      -- same keys as memdir.toml (camelCase or snake_case), plus `directories`
      indexLineLimit = 150,
      -- preview = true,   -- run the preview rules too (unset: memdir.toml decides)
    },
  },
  handlers = {
    -- selections delivered by memory/prefetch
    ['memory/relevantMemories'] = function(_, result)
      vim.notify(('%d memories surfaced'):format(#result.surfaced))
    end,
  },
})
vim.lsp.enable('memdir')
