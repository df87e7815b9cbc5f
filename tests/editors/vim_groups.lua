-- Writes, as JSON, the highlight group of every character of IFR_FILE in Neovim (editors/vim on the runtimepath).
vim.cmd("filetype plugin on | syntax on")
vim.cmd.edit(os.getenv("IFR_FILE"))
local out = {}
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
for l, text in ipairs(lines) do
  local row = {}
  for c = 1, #text do
    local id = vim.fn.synID(l, c, 1)
    table.insert(row, vim.fn.synIDattr(vim.fn.synIDtrans(id), "name") .. ":" .. vim.fn.synIDattr(id, "name"))
  end
  out[l] = row
end
out.filetype = vim.bo.filetype
local f = io.open(os.getenv("IFR_OUT"), "w"); f:write(vim.json.encode(out)); f:close()
vim.cmd("qa!")
