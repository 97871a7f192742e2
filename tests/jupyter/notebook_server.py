"""The Notebook server with the sbx-oci kernel, as a person uses it (issue 43).

Debian's Notebook server (jupyter-notebook, 6.x) runs from the venv that has the
provisioner and the kernelspec, on loopback with a token. Headless Chromium (Debian's
chromium and chromium-driver, through Debian's selenium) opens a notebook whose
kernelspec is sbx-oci, runs its cells with Shift+Enter, and must see:
  - the kernel's name, "Python 3 (sbx-oci)", in the notebook's kernel indicator;
  - the first cell's output: a file of the host next to the notebook directory is
    not visible to the kernel (with Debian's python3 kernel it is: the control);
  - the second cell's figure, a PNG from matplotlib's inline backend.
The screenshot of the page is written to SHOT. Usage:
    notebook_server.py KERNEL EXPECT_VISIBLE WORK SHOT
KERNEL: a kernelspec name; EXPECT_VISIBLE: "True" or "False"; WORK: a scratch
directory (the notebooks and the host file go there).
"""
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import WebDriverWait


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_notebook(path, kernel, display, host_file):
    cells = [
        "import os\nprint('host file visible:', os.path.exists(%r))" % host_file,
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    ]
    nb = {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": kernel, "display_name": display, "language": "python"}},
        "cells": [{"cell_type": "code", "id": "c%d" % i, "metadata": {}, "execution_count": None,
                   "outputs": [], "source": src} for i, src in enumerate(cells)],
    }
    with open(path, "w") as f:
        json.dump(nb, f)


def start_server(nbdir, port, token, log):
    # --allow-root: the stage runs as root (the sandboxes' cgroups)
    cmd = [sys.executable, "-m", "notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1",
           "--port=%d" % port, "--port-retries=0", "--NotebookApp.token=" + token,
           "--notebook-dir=" + nbdir]
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = "http://127.0.0.1:%d/api/status?token=%s" % (port, token)
    deadline = time.time() + 60
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit("the notebook server exited with %d" % server.returncode)
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("the notebook server did not answer in 60 s")


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    # --no-sandbox: Chromium refuses root without it; the page is our own on loopback
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def run_cells(driver, n):
    """Shift+Enter in each code cell, as a person runs them."""
    for i in range(n):
        cell = driver.find_elements(By.CSS_SELECTOR, "div.code_cell")[i]
        cell.find_element(By.CSS_SELECTOR, ".CodeMirror").click()
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()


def check_page(driver, expect_visible, display):
    wait = WebDriverWait(driver, 120, poll_frequency=0.3)
    # the kernel started and is idle: its indicator says so, and names it
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#kernel_indicator_icon.kernel_idle_icon"))
    name = driver.find_element(By.CSS_SELECTOR, ".kernel_indicator_name").text
    if name != display:
        raise SystemExit("the kernel indicator says %r, not %r" % (name, display))
    run_cells(driver, 2)
    want = "host file visible: %s" % expect_visible

    def stdout_text(d):
        outs = d.find_elements(By.CSS_SELECTOR, "div.output_stdout pre")
        return outs and outs[0].text.strip()
    wait.until(lambda d: stdout_text(d))
    got = stdout_text(driver)
    if got != want:
        raise SystemExit("the first cell printed %r, not %r" % (got, want))
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "div.output_png img"))
    src = driver.find_element(By.CSS_SELECTOR, "div.output_png img").get_attribute("src")
    if not src.startswith("data:image/png;base64,"):
        raise SystemExit("the figure is not an inline PNG: %s" % src[:60])
    return name, got, len(src)


def main():
    kernel, expect_visible, work, shot = sys.argv[1:5]
    display = {"sbx-oci": "Python 3 (sbx-oci)"}.get(kernel, "Python 3 (ipykernel)")
    nbdir = os.path.join(work, "notebooks")
    os.makedirs(nbdir, exist_ok=True)
    host_file = os.path.join(work, "host-file")
    open(host_file, "w").write("only the host has this\n")
    write_notebook(os.path.join(nbdir, "server.ipynb"), kernel, display, host_file)
    token, port = secrets.token_hex(16), free_port()
    log = open(os.path.join(work, "notebook-server.log"), "w")
    server = start_server(nbdir, port, token, log)
    driver = None
    try:
        driver = browser()
        driver.get("http://127.0.0.1:%d/notebooks/server.ipynb?token=%s" % (port, token))
        try:
            name, got, size = check_page(driver, expect_visible, display)
        finally:
            driver.save_screenshot(shot)
        print("notebook server: %s: kernel %r, %r, a %d-byte inline PNG; screenshot %s"
              % (kernel, name, got, size, shot))
    finally:
        if driver:
            driver.quit()
        # on SIGTERM the server stops its loop and shuts its kernels down (cleanup_kernels)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
            raise SystemExit("the notebook server did not stop on SIGTERM in 30 s")


if __name__ == "__main__":
    main()
