-- Drives Neovim (headless) against `ifr lsp` as a user would, and writes what it saw as JSON.
-- IFR_CMD: the server's command (a JSON list); IFR_FILE: the model to open; IFR_OUT: where to write.
local out = { steps = {} }
local function step(name) table.insert(out.steps, name) end
local function finish()
  local f = assert(io.open(os.getenv("IFR_OUT"), "w"))
  f:write(vim.json.encode(out))
  f:close()
  vim.cmd("qa!")
end
local ok, err = pcall(function()
  local cmd = vim.json.decode(os.getenv("IFR_CMD"))
  local file = os.getenv("IFR_FILE")
  vim.cmd.edit(file)
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start({ name = "ifr", cmd = cmd, root_dir = vim.fs.dirname(file) })
  local client = vim.lsp.get_client_by_id(id)
  local function diags()
    return vim.tbl_map(function(d) return { d.lnum, d.col, d.end_lnum, d.end_col, d.message } end,
      vim.diagnostic.get(buf))
  end
  local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
  local function request(method, params)
    local answer = client:request_sync(method, params, 30000, buf)
    return answer and answer.result
  end
  local doc = { uri = vim.uri_from_bufnr(buf) }

  assert(vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20), "no first diagnostics")
  out.encoding = client.offset_encoding
  out.first = diags()
  step("diagnostics")

  -- an edit (byte columns, as Neovim counts): `延迟 = 5 µs` -> `延迟 = 50 µs`; the failed check passes
  local row = 1
  local col = assert(lines()[row + 1]:find("5 ", 1, true)) - 1
  vim.api.nvim_buf_set_text(buf, row, col, row, col + 1, { "50" })
  assert(vim.wait(30000, function() return #vim.diagnostic.get(buf) == 0 end, 20), "no diagnostics after the edit")
  out.after_edit = diags()
  step("edit")

  -- hover on the second character of 延迟 in `total = 延迟 * 2 + 1 µs`
  local total = 3
  local at = #"total = 延"
  local hover = request("textDocument/hover", { textDocument = doc, position = { line = total, character = at } })
  out.hover = hover and hover.contents.value
  step("hover")

  -- inlay hints, on the whole buffer
  local hints = request("textDocument/inlayHint", { textDocument = doc,
    range = { start = { line = 0, character = 0 }, ["end"] = { line = #lines(), character = 0 } } }) or {}
  out.hints = vim.tbl_map(function(h)
    return { h.position.line, h.position.character, type(h.label) == "string" and h.label or "" } end, hints)
  out.line_bytes = vim.tbl_map(function(l) return #l end, lines())
  step("inlay hints")

  -- rename 延迟 through Neovim's own command, which applies the edit as Neovim does
  vim.api.nvim_win_set_cursor(0, { total + 1, at })
  vim.lsp.buf.rename("delay")
  assert(vim.wait(30000, function() return not vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1]:find("延迟") end, 20),
    "the rename was not applied")
  out.renamed = lines()
  step("rename")

  -- formatting: an untidy line, formatted by the server through Neovim
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "zz=1+2", "yy  =  zz*3 GB" })
  vim.lsp.buf.format({ timeout_ms = 30000 })
  out.formatted = lines()
  step("formatting")
end)
if not ok then out.error = tostring(err) end
finish()
